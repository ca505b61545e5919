// The console's Reports and Plan MIG views and its spatial drops, against the real engine on the
// simulated h100x2-mig box (GPU 0 plain, GPU 1 in MIG mode) with the demo running and usage recorded.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { JobView } from '../shared/jobs.js';
import { fakegpuBuildDir } from '../electron/engine/paths.js';
import { browserMissing, eventually, openConsoleHarness, sleep, type ConsoleHarness } from './harness.js';
import { assertUncovered } from './on-screen.js';

const GIB = 1024 ** 3;
const missing = browserMissing();

describe('console views on the simulated h100x2-mig box', { skip: missing ?? false, timeout: 180_000 }, () => {
  let h: ConsoleHarness;
  const jobs = async (): Promise<JobView[]> => h.engine.call('jobs.list', {});
  const jobById = async (id: string): Promise<JobView | undefined> => (await jobs()).find((j) => j.id === id);
  /** A job that stays queued: it asks for almost a whole H100, and neither GPU has that free. */
  const submitQueued = (): Promise<JobView> =>
    h.engine.call('jobs.submit', { argv: [h.driver.libDir + '/fakejob', 'hold', '--duration', '60'], gpu: 'auto', memoryRequestBytes: 79 * GIB });
  /** A job that waits for GPU 0 alone (exclusive, and the demo runs there) yet fits beside it once it shares under MPS. */
  const submitQueuedExclusive = (): Promise<JobView> =>
    h.engine.call('jobs.submit', { argv: [h.driver.libDir + '/fakejob', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '120'], gpu: 0, mode: 'exclusive' });
  /** A job queued for GPU 1, which is in MIG mode: it can only run in one of its slices. */
  const submitQueuedForMigGpu = (): Promise<JobView> =>
    h.engine.call('jobs.submit', { argv: [h.driver.libDir + '/fakejob', '--mem', '1G', 'hold', '--duration', '120'], gpu: 1 });
  const openView = async (title: string): Promise<void> => {
    await h.page.locator('.view-tabs').getByRole('button', { name: title }).click();
  };
  /** Scroll a console section into view and wait until it says it is live again (InView pauses it otherwise). */
  const liveSection = async (selector: string): Promise<void> => {
    await h.page.locator(selector).scrollIntoViewIfNeeded();
    await h.page.locator(`.in-view[data-in-view="true"]:has(${selector})`).waitFor({ timeout: 5000 });
  };
  /** The newest notice saying `expected` (an older notice may still be on the page while the new one renders). */
  const noticeSaying = async (expected: RegExp): Promise<string> => {
    const notice = h.page.locator('.notice[role="alert"]', { hasText: expected }).last();
    await notice.waitFor({ timeout: 10_000 });
    return notice.innerText();
  };

  before(async () => {
    h = await openConsoleHarness('h100x2-mig', { usage: true, demo: true });
    await h.page.goto(h.web.url);
    await h.page.locator('.gpu-card').first().waitFor({ timeout: 15_000 });
  });
  after(async () => h?.close());

  test('GPU 1, in MIG mode: the demo\'s hog, alone in its slice, has SM % from the slice (GPM) on the timeline and in the slice, with no "not reported" note', async () => {
    const note = h.page.locator('.timeline[data-metric="sm"] .timeline-note', { hasText: 'The driver does not report SM % per process on MIG slices.' });
    const tabs = h.page.locator('.timeline-panel').getByRole('tab');
    await tabs.getByText('GPU 1', { exact: true }).click();
    const timeline = h.page.locator('.timeline[data-metric="sm"]');
    await eventually(async () => Number(await timeline.getAttribute('data-series')) > 0, 15_000, 'an SM series on GPU 1 (the hog in its slice)');
    assert.equal(await note.count(), 0, 'SM % is reported on GPU 1 now');
    await liveSection('.gpu-grid');
    const sm = h.page.locator('.gpu-card[data-gpu="1"] .mig-slice .mig-sm');
    await eventually(async () => /^SM \d+%$/.test((await sm.first().textContent({ timeout: 1000 }).catch(() => '')) ?? ''), 15_000, 'SM % in a MIG slice');
  });

  test('the Reports view shows rows for the demo\'s jobs, and its CSV export downloads and parses back', async (t) => {
    assert.ok(h.demo && h.demo.jobs.length > 0, 'the demo submitted jobs');
    await sleep(3000); // a few seconds of sampling
    await openView('Reports');
    await h.page.locator('.reports-view').getByRole('button', { name: 'by Job' }).click();
    await eventually(async () => {
      await h.page.locator('.reports-view').getByRole('button', { name: 'Refresh' }).click().catch(() => undefined);
      const keys = await h.page.locator('.report-table tbody tr[data-key]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')));
      return h.demo!.jobs.every((id) => keys.includes(id));
    }, 20_000, `rows for the demo's jobs ${h.demo.jobs.join(', ')}`);
    await h.page.locator('.report-chart .recharts-bar-rectangle').first().waitFor();
    const valueTicks = await h.page.locator('.report-chart .recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value').allTextContents();
    assert.ok(valueTicks.length > 0 && valueTicks.every((t) => / h$/.test(t)), `the GPU-hours axis gives its unit: ${valueTicks.join(', ')}`);
    assert.match(await h.page.locator('.report-range-note').innerText(), /GPU-hours: a MIG slice counts its share of its GPU/, 'the summary says how a MIG slice counts');
    await h.screenshot('views-reports');

    const [download] = await Promise.all([h.page.waitForEvent('download'), h.page.locator('.report-exports').getByRole('button', { name: 'CSV' }).click()]);
    assert.match(download.suggestedFilename(), /^gpushare-usage-by-job-\d{4}-\d\d-\d\d\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8');
    const [header, ...rows] = csv.split('\r\n').filter(Boolean).map((line) => line.split(','));
    assert.deepEqual(header, ['job', 'label', 'gpu_seconds', 'sm_seconds', 'memory_gib_hours', 'peak_memory_bytes', 'queued_seconds', 'suspended_seconds', 'contention_minutes']);
    for (const id of h.demo.jobs) {
      const row = rows.find((r) => r[0] === id);
      assert.ok(row, `${id} is in the CSV`);
      assert.ok(Number(row.at(-7)) > 0, `${id} has GPU seconds`);
    }
    t.diagnostic(`CSV: ${rows.length} rows, ${csv.length} bytes`);

    const [html] = await Promise.all([h.page.waitForEvent('download'), h.page.locator('.report-exports').getByRole('button', { name: 'HTML report' }).click()]);
    assert.match(readFileSync((await html.path())!, 'utf8'), /<svg/);
  });

  test('a queued job dropped onto a GPU card is placed there', async () => {
    await openView('Console');
    const job = await submitQueued();
    const card = h.page.locator(`.job-card[data-job="${job.id}"]`);
    await card.waitFor({ timeout: 15_000 });
    assert.equal(await card.getAttribute('data-lane'), 'queue');
    await card.dragTo(h.page.locator('.gpu-card[data-gpu="0"] .memory-line'));
    const placed = await eventually(async () => {
      const j = await jobById(job.id);
      return j?.gpu === 0 ? j : null;
    }, 10_000, `${job.id} placed on GPU 0`);
    assert.equal(placed.requestedGpu, 0);
    assert.equal(placed.mode, 'shared');
    await h.page.locator(`.job-card[data-job="${job.id}"]`).getByText('GPU 0', { exact: true }).waitFor(); // a waiting reason on the card may name the GPU too
    await h.screenshot('views-queue-to-gpu');
  });

  test('a job dropped on the MPS zone runs under MPS with the share given; 0 and 150 are refused', async () => {
    const job = await submitQueuedExclusive();
    assert.equal((await eventually(async () => jobById(job.id), 5000, `${job.id} listed`)).state, 'queued', 'it waits: GPU 0 is not empty');
    await liveSection('.job-board');
    const card = h.page.locator(`.job-card[data-job="${job.id}"]`);
    await card.waitFor({ timeout: 15_000 });
    const zone = h.page.locator('.gpu-card[data-gpu="0"] .mps-zone');
    await eventually(async () => /MPS\s+(off|on|MPS held by user)/.test(await zone.innerText()), 10_000, 'the MPS zone to show mps.status');
    for (const share of ['150', '0']) {
      await card.dragTo(zone);
      const input = zone.getByLabel('SM share in percent');
      await input.waitFor();
      assert.equal(await zone.getByLabel('Job', { exact: true }).inputValue(), job.id);
      await input.fill(share);
      await input.press('Enter');
      const refusal = new RegExp(`${job.id} could not run under MPS on GPU 0 with a ${share}% SM share: .*(100|1)`);
      assert.match(await noticeSaying(refusal), refusal);
      const now = await jobById(job.id);
      assert.equal(now?.mode, 'exclusive', `a share of ${share} changed nothing`);
      assert.equal(await card.getAttribute('data-lane'), 'queue', 'the card is back in the queue');
    }
    await h.screenshot('views-mps-refused');
    await card.dragTo(zone);
    await zone.getByLabel('SM share in percent').fill('30');
    await h.screenshot('views-mps-prompt');
    await zone.getByRole('button', { name: 'Run under MPS' }).click();
    const inMps = await eventually(async () => {
      const j = await jobById(job.id);
      return j?.mode === 'mps' && j.gpu !== null ? j : null; // the mode first, then the place: two calls
    }, 10_000, `${job.id} in mode mps and placed (jobs.list)`);
    assert.equal(inMps.mpsSharePercent, 30);
    assert.equal(inMps.gpu, 0);
    // and the driver agrees: its process is a client of GPU 0's MPS server, with a 30 % share
    const pid = await eventually(async () => (await jobById(job.id))?.pid, 15_000, `${job.id} to start under MPS`);
    const client = await eventually(async () => {
      const status = JSON.parse(execFileSync(join(fakegpuBuildDir(), 'fakegpu'), ['mps', '--state', h.driver.statePath, 'status'], { encoding: 'utf8' })) as Array<{ device: number; running: boolean; clients: Array<{ pid: number; share: number }> }>;
      const gpu0 = status.find((d) => d.device === 0);
      return gpu0?.running ? gpu0.clients.find((c) => c.pid === pid) : undefined;
    }, 20_000, `pid ${pid} to be an MPS client on GPU 0 per the driver`);
    assert.equal(client.share, 30);
    const listed = (await h.driver.dump()).devices[0].processes.find((p) => p.pid === pid);
    assert.equal(listed?.type, 'mps', 'the driver lists it as an MPS client process');
  });

  test('a queued job sent to a MIG slice from the keyboard (Enter, pick, submit) runs in that slice; Escape cancels', async () => {
    await openView('Console');
    const job = await submitQueuedForMigGpu();
    assert.equal((await eventually(async () => jobById(job.id), 5000, `${job.id} listed`)).state, 'queued', 'it waits: GPU 1 runs only MIG slices');
    await liveSection('.job-board');
    await h.page.locator(`.job-card[data-job="${job.id}"]`).waitFor({ timeout: 15_000 });
    await liveSection('.gpu-grid');
    const card = h.page.locator('.gpu-card[data-gpu="1"]');
    const slice = card.locator('.mig-slice').first();
    const uuid = await slice.getAttribute('data-slice');
    assert.match(uuid ?? '', /^MIG-/);
    assert.match((await slice.getAttribute('aria-label')) ?? '', /^MIG slice \S+ .*Press Enter to run a queued job in it\.$/);
    const prompt = card.locator('.mig-slice-prompt');

    await slice.focus();
    await h.page.keyboard.press('Enter');
    await prompt.waitFor();
    assert.equal(await slice.getAttribute('aria-expanded'), 'true');
    await h.page.keyboard.press('Escape');
    await prompt.waitFor({ state: 'detached' });
    assert.equal(await card.locator('.mig-slice:focus').getAttribute('data-slice', { timeout: 2000 }), uuid, 'Escape gives the focus back to the slice');
    assert.equal((await jobById(job.id))?.mode, 'shared', 'Escape changed nothing');

    await h.page.keyboard.press('Enter');
    const select = prompt.getByLabel('Job', { exact: true });
    await select.waitFor();
    assert.equal(await prompt.locator('select:focus').count(), 1, 'the prompt opens on its job list');
    await select.selectOption(job.id);
    await h.screenshot('views-mig-slice-prompt');
    await h.page.keyboard.press('Tab'); // to "Run in slice"
    await h.page.keyboard.press('Enter');
    await prompt.waitFor({ state: 'detached' });
    const inSlice = await eventually(async () => {
      const j = await jobById(job.id);
      return j?.mode === 'mig' ? j : null;
    }, 10_000, `${job.id} in mode mig (jobs.list)`);
    assert.equal(inSlice.migSlice, uuid);
    assert.equal(inSlice.requestedGpu, 1);
    // and the driver agrees: its process is on GPU 1, in the GPU and compute instance of that slice
    const slices = (await h.driver.dump()).devices[1].migDevices;
    const target = slices.find((m) => m.uuid === uuid);
    assert.ok(target, `the driver knows slice ${uuid}`);
    const pid = await eventually(async () => (await jobById(job.id))?.pid, 15_000, `${job.id} to start in its slice`);
    const onGpu1 = await eventually(async () => (await h.driver.dump()).devices[1].processes.find((p) => p.pid === pid), 15_000, `pid ${pid} on GPU 1 per the driver`);
    assert.deepEqual([onGpu1.gpuInstanceId, onGpu1.computeInstanceId], [target.gpuInstanceId, target.computeInstanceId], `pid ${pid} runs in slice ${uuid}`);
  });

  test('drops that change nothing say why (a card dropped on the Queue lane; an exclusive job dropped on its busy GPU), and the notice covers neither card', async () => {
    await openView('Console');
    await liveSection('.job-board');
    const notices = h.page.locator('.notice[role="alert"]');
    const startedCard = h.page.locator('.job-card:not([data-lane="queue"])').first();
    await startedCard.waitFor({ timeout: 15_000 });
    const startedId = await startedCard.getAttribute('data-job');
    await startedCard.dragTo(h.page.locator('.lane[data-lane="queue"]'));
    const back = notices.filter({ hasText: `${startedId} stays where it is` }).last();
    await back.waitFor({ timeout: 5000 });
    assert.match(await back.innerText(), /cannot go back to the queue/);
    await assertUncovered(back, h.page.locator(`.job-card[data-job="${startedId}"]`));

    const job = await submitQueuedExclusive();
    const card = h.page.locator(`.job-card[data-job="${job.id}"]`);
    await card.waitFor({ timeout: 15_000 });
    const waiting = await eventually(async () => (await h.engine.call('alerts.active', {})).find((c) => c.kind === 'waiting' && c.jobId === job.id), 10_000, `the scheduler to say why ${job.id} waits`);
    await card.dragTo(h.page.locator('.gpu-card[data-gpu="0"] .memory-line'));
    const why = notices.filter({ hasText: waiting.message }).last();
    await why.waitFor({ timeout: 10_000 });
    assert.match(await why.innerText(), new RegExp(`^${job.id} is placed on GPU 0 but does not start yet`));
    await assertUncovered(why, h.page.locator('.gpu-card[data-gpu="0"]'));
    await assertUncovered(why, h.page.locator(`.job-card[data-job="${job.id}"]`));
    await h.screenshot('views-drop-waits');
    await h.engine.call('jobs.terminate', { job: job.id });
  });

  test('the MIG slice picker offers only jobs the engine accepts there: a job queued for another GPU is listed as not possible, with why', async () => {
    await openView('Console');
    const elsewhere = await submitQueuedExclusive(); // queued for GPU 0
    const here = await submitQueuedForMigGpu(); // queued for GPU 1, the MIG GPU
    await liveSection('.job-board');
    await h.page.locator(`.job-card[data-job="${here.id}"]`).waitFor({ timeout: 15_000 });
    await liveSection('.gpu-grid');
    const card = h.page.locator('.gpu-card[data-gpu="1"]');
    await card.locator('.mig-slice').first().focus();
    await h.page.keyboard.press('Enter');
    const select = card.locator('.mig-slice-prompt').getByLabel('Job', { exact: true });
    await select.waitFor();
    const option = (id: string) => select.locator(`option[value="${id}"]`);
    assert.equal(await option(here.id).isDisabled(), false, `${here.id} (queued for GPU 1) can run in the slice`);
    assert.equal(await option(elsewhere.id).count(), 1, `${elsewhere.id} is listed`);
    assert.equal(await option(elsewhere.id).isDisabled(), true, `${elsewhere.id} is queued for GPU 0: the engine refuses it in a slice of GPU 1`);
    assert.match(await option(elsewhere.id).innerText(), /queued for GPU 0/);
    await h.page.keyboard.press('Escape');
    await Promise.all([elsewhere, here].map((j) => h.engine.call('jobs.terminate', { job: j.id })));
  });

  test('Start MPS and Stop MPS on GPU 0 start and stop the engine\'s daemon', async () => {
    // an MPS job from an earlier test would have the scheduler start the daemon again
    const mpsJobs = (await jobs()).filter((j) => j.managed && j.mode === 'mps');
    await Promise.all(mpsJobs.map((j) => h.engine.call('jobs.terminate', { job: j.id })));
    await eventually(async () => (await jobs()).every((j) => !mpsJobs.some((m) => m.id === j.id)), 10_000, 'the MPS jobs to end');
    const engineState = async (): Promise<string | undefined> => (await h.engine.call('mps.status', {})).find((m) => m.gpu === 0)?.state;
    await openView('Console');
    await h.page.locator('.gpu-grid').scrollIntoViewIfNeeded(); // the zone reads the MPS store, which never pauses
    const zone = h.page.locator('.gpu-card[data-gpu="0"] .mps-zone');
    const press = async (name: 'Start MPS' | 'Stop MPS', state: 'ours' | 'off'): Promise<void> => {
      await zone.getByRole('button', { name }).click();
      await eventually(async () => (await engineState()) === state, 10_000, `mps.status to say ${state} after ${name}`);
      await eventually(async () => (await zone.getAttribute('data-mps-state')) === state, 10_000, `the zone to show ${state} after ${name}`);
    };
    await eventually(async () => ['off', 'ours'].includes((await zone.getAttribute('data-mps-state')) ?? ''), 10_000, 'the MPS zone to show mps.status');
    if ((await engineState()) === 'ours') await press('Stop MPS', 'off');
    assert.equal(await zone.getByRole('button', { name: 'Stop MPS' }).count(), 0, 'no Stop while MPS is off');
    await press('Start MPS', 'ours');
    assert.match(await zone.locator('.mps-status').innerText(), /^on, ours/);
    assert.equal(await zone.getByRole('button', { name: 'Start MPS' }).count(), 0, 'no Start while MPS is ours');
    await h.screenshot('views-mps-started');
    await press('Stop MPS', 'off');
    await zone.getByRole('button', { name: 'Start MPS' }).waitFor();
  });

  test('Plan MIG shows a layout and its commands for GPU 1, and a dry run lists the commands', async () => {
    await openView('Plan MIG');
    const view = h.page.locator('.mig-plan-view');
    await view.getByLabel('GPU', { exact: true }).selectOption('1');
    await view.locator('.slice-map').first().waitFor(); // today's layout
    assert.equal(await view.locator('.slice-map').first().locator('.slice-block').count(), 4, 'today: 3g.40gb + 2g.20gb + 2 × 1g.10gb');
    // the demo's hog holds the 3g.40gb slice (memory slices 5-8) with 31.6 of its 39.5G (a job sent there by the
    // keyboard test above may hold 1G more): the plan keeps it and puts no 20G job beside it, so the other half holds one
    await eventually(async () => (await h.driver.dump()).devices[1].processes.some((p) => p.gpuInstanceId === 1), 15_000, 'the demo\'s hog in GPU 1\'s 3g.40gb slice');
    await view.getByLabel('Job specs').fill('20G,20G');
    await view.getByRole('button', { name: 'Plan', exact: true }).click();
    const proposed = view.locator('.slice-map').nth(1);
    await proposed.waitFor();
    const labels = await proposed.locator('.slice-job').allInnerTexts();
    assert.equal(labels.filter((l) => l === '20G').length, 1, `one slice for a 20G job: ${labels.join(', ')}`);
    assert.ok(labels.includes('kept (GI 1)'), `the hog's busy slice is kept as it is: ${labels.join(', ')}`);
    assert.match(await view.locator('.plan-outcome').innerText(), /busy slices are kept as they are: 3g\.40gb at 4 \(GI 1, pid [\d, ]+, \d(\.\d)?G free now\)/);
    const commands = await view.locator('.plan-commands li').allInnerTexts();
    assert.ok(commands.length > 0 && commands.every((c) => c.startsWith('nvidia-smi mig')), `nvidia-smi mig commands: ${commands.join(' | ')}`);
    await h.screenshot('views-mig-plan');

    await view.getByRole('button', { name: 'Apply (dry run)' }).click();
    await view.getByText(/^Dry run: nothing was changed/).waitFor();
    assert.deepEqual(await view.locator('.plan-commands li').allInnerTexts(), commands);
    assert.equal((await h.engine.call('mig.layout', { gpu: 1 })).slices.length, 4, 'the dry run changed nothing');
    await h.screenshot('views-mig-dry-run');
  });

  test('Plan MIG on GPU 1: six 4G jobs beside the busy 3g.40gb: four 1g.10gb, one beside the hog (it has the memory free now), two share a slice through MPS; the slices say so', async () => {
    await openView('Plan MIG');
    const view = h.page.locator('.mig-plan-view');
    await view.getByLabel('GPU', { exact: true }).selectOption('1');
    await view.locator('.slice-map').first().waitFor();
    await view.getByLabel('Job specs').fill('4G,4G,4G,4G,4G,4G');
    await view.getByRole('button', { name: 'Plan', exact: true }).click();
    const proposed = view.locator('.slice-map').nth(1);
    await eventually(async () => (await proposed.locator('.slice-job').allInnerTexts()).some((l) => l.endsWith('(MPS)')), 10_000, 'an MPS slice in the plan');
    const labels = await proposed.locator('.slice-job').allInnerTexts();
    assert.deepEqual(labels.filter((l) => l.endsWith('(MPS)')), ['4G 100% + 4G 100% (MPS)'], labels.join(' | '));
    assert.equal(labels.filter((l) => l === '4G').length, 3, labels.join(' | '));
    assert.equal(labels.filter((l) => /^4G, beside pid \d+/.test(l)).length, 1, labels.join(' | '));
  });

  test('Plan MIG: a real Apply the engine refuses never reads "Dry run: nothing was changed"; a refused plan leaves no older plan under its error', async () => {
    await openView('Plan MIG');
    const view = h.page.locator('.mig-plan-view');
    await view.getByLabel('GPU', { exact: true }).selectOption('0'); // MIG mode off: applying is blocked
    await view.locator('.slice-map').first().waitFor();
    await view.getByLabel('Job specs').fill('20G');
    await view.getByRole('button', { name: 'Plan', exact: true }).click();
    await view.getByText(/^Dry run: nothing was changed/).waitFor();
    await view.getByLabel('dry run: only list the commands').uncheck();
    await view.getByRole('button', { name: 'Apply', exact: true }).click();
    await view.locator('.plan-refusal').waitFor({ timeout: 10_000 });
    assert.match(await view.locator('.plan-refusal').innerText(), /MIG mode/i, 'the engine\'s reason');
    assert.equal(await view.getByText(/Dry run: nothing was changed/).count(), 0, 'this was a real Apply, refused');
    assert.match(await view.locator('.plan-verdict').innerText(), /not applied/i);
    await h.screenshot('views-mig-apply-refused');

    await view.getByLabel('Job specs').fill('lots');
    await view.getByRole('button', { name: 'Plan', exact: true }).click();
    await eventually(async () => /lots/.test(await view.locator('.plan-refusal').innerText().catch(() => '')), 10_000, 'the engine to refuse the spec "lots"');
    assert.equal(await view.locator('.slice-map').count(), 1, 'only today\'s layout: no proposal from the earlier plan under the new error');
    assert.equal(await view.locator('.plan-commands').count(), 0, 'no commands from the earlier plan');
    await view.getByLabel('dry run: only list the commands').check();
  });
});
