// MPS inside MIG slices in the console, against the real engine on the simulated h100x2-mig box (GPU 1 in
// MIG mode: GI 1 a 3g.40gb, GI 2 a 2g.20gb, GI 3 and 4 1g.10gb): a job dropped on a slice may share it
// through MPS with an SM share (bad shares named in the prompt, nothing applied), a second one joins the
// same daemon, and the slice's tile and the GPU's MPS list show the daemon with its clients and shares.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { JobView } from '../shared/jobs.js';
import { fakegpuBuildDir } from '../electron/engine/paths.js';
import { browserMissing, eventually, openConsoleHarness, type ConsoleHarness } from './harness.js';

const missing = browserMissing();

interface DriverSliceDaemon {
  gpuInstanceId: number;
  running: boolean;
  pid: number;
  clients: Array<{ pid: number; share: number }>;
}

describe('MPS inside MIG slices in the console (simulated h100x2-mig)', { skip: missing ?? false, timeout: 180_000 }, () => {
  let h: ConsoleHarness;
  const jobById = async (id: string): Promise<JobView | undefined> => (await h.engine.call('jobs.list', {})).find((j) => j.id === id);
  /** Queued for GPU 1, which runs only MIG slices: it waits until it is given one. */
  const submitForMigGpu = (): Promise<JobView> =>
    h.engine.call('jobs.submit', { argv: [h.driver.libDir + '/fakejob', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '120'], gpu: 1 });
  /** The driver's record of a slice's MPS daemon on GPU 1 (fakegpu mps status). */
  const driverDaemon = (gi: number): DriverSliceDaemon | undefined =>
    (JSON.parse(execFileSync(join(fakegpuBuildDir(), 'fakegpu'), ['mps', '--state', h.driver.statePath, 'status'], { encoding: 'utf8' })) as Array<{ device: number; instances?: DriverSliceDaemon[] }>)
      .find((d) => d.device === 1)
      ?.instances?.find((i) => i.gpuInstanceId === gi);
  const sliceUuid = async (gi: number): Promise<string> => (await h.engine.call('snapshot.latest', {}))!.gpus[1].migSlices.find((s) => s.gpuInstanceId === gi)!.uuid;
  const card = () => h.page.locator('.gpu-card[data-gpu="1"]');
  const tile = (uuid: string) => card().locator(`.mig-slice[data-slice="${uuid}"]`);
  const live = async (selector: string): Promise<void> => {
    await h.page.locator(selector).scrollIntoViewIfNeeded();
    await h.page.locator(`.in-view[data-in-view="true"]:has(${selector})`).waitFor({ timeout: 5000 });
  };

  before(async () => {
    h = await openConsoleHarness('h100x2-mig');
    await h.page.goto(h.web.url);
    await card().waitFor({ timeout: 15_000 });
  });
  after(async () => h?.close());

  test('a job dropped on a slice shares it through MPS at the share given (0, 101 and "half" are named in the prompt and change nothing); a second job dropped there joins the same daemon; the tile and the MPS list show both clients with their shares', async () => {
    const uuid = await sliceUuid(2); // the 2g.20gb
    const first = await submitForMigGpu();
    await live('.job-board');
    const firstCard = h.page.locator(`.job-card[data-job="${first.id}"]`);
    await firstCard.waitFor({ timeout: 15_000 });
    await live('.gpu-grid');

    // the drop opens the slice's prompt with the dropped job chosen
    await firstCard.dragTo(tile(uuid));
    const prompt = card().locator('.mig-slice-prompt');
    await prompt.waitFor({ timeout: 5000 });
    assert.equal(await prompt.getByLabel('Job', { exact: true }).inputValue(), first.id, 'the dropped job is the one chosen');
    const shares = prompt.getByRole('checkbox', { name: 'Share the slice through MPS' });
    const share = prompt.getByRole('textbox', { name: 'SM share of the slice in percent' });
    assert.equal(await shares.isChecked(), false, 'a slice without a daemon is not shared unless asked');
    assert.equal(await share.isDisabled(), true, 'no share to give while not sharing');
    await shares.check();
    assert.equal(await share.inputValue(), '50', 'the default share');

    const refused: Array<[string, RegExp]> = [
      ['0', /SM share 0 % is out of range: give a whole percentage from 1 to 100/],
      ['101', /SM share 101 % is out of range: give a whole percentage from 1 to 100/],
      ['half', /SM share "half" is not a number: give a whole percentage from 1 to 100/],
    ];
    for (const [text, why] of refused) {
      await share.fill(text);
      await prompt.getByRole('button', { name: 'Run in slice under MPS' }).click();
      const error = prompt.locator('.prompt-error');
      await eventually(async () => why.test((await error.textContent({ timeout: 1000 }).catch(() => '')) ?? ''), 5000, `the prompt to say ${why}`);
      assert.equal(await share.getAttribute('aria-invalid'), 'true');
      const now = await jobById(first.id);
      assert.deepEqual([now?.state, now?.mode, now?.migSlice, now?.mpsSharePercent], ['queued', 'shared', null, null], `"${text}" changed nothing in the engine`);
    }
    await h.screenshot('mig-mps-share-refused');
    await share.fill('50');
    await prompt.getByRole('button', { name: 'Run in slice under MPS' }).click();
    await prompt.waitFor({ state: 'detached' });

    const inSlice = await eventually(async () => {
      const j = await jobById(first.id);
      return j?.mode === 'mig' && j.pid ? j : null;
    }, 15_000, `${first.id} in mode mig and started`);
    assert.deepEqual([inSlice.migSlice, inSlice.mpsSharePercent], [uuid, 50]);
    const daemon = await eventually(() => {
      const d = driverDaemon(2);
      return d?.running && d.clients.some((c) => c.pid === inSlice.pid) ? d : null;
    }, 15_000, `pid ${inSlice.pid} a client of the 2g.20gb's MPS daemon per the driver`);
    assert.equal(daemon.clients.find((c) => c.pid === inSlice.pid)?.share, 50);

    // the tile marks the daemon with its client and share; the GPU's MPS list names the slice
    const mark = tile(uuid).locator('.mig-mps');
    await eventually(async () => /^MPS\b/.test((await mark.textContent({ timeout: 1000 }).catch(() => '')) ?? ''), 15_000, 'the MPS mark on the slice');
    await eventually(async () => (await mark.innerText()).includes(`${first.id} 50%`), 10_000, `${first.id} 50% on the slice's MPS mark`);
    const list = card().locator('.mps-slices');
    const row = list.locator(`.mps-slice-row[data-slice="${uuid}"]`);
    await eventually(async () => (await row.count()) === 1, 10_000, 'the slice daemon in the GPU\'s MPS list');
    const rowText = await row.innerText();
    assert.match(rowText, /2g\.20gb/, 'the slice\'s profile');
    assert.ok(rowText.includes(`…${uuid.slice(-8)}`), `the UUID's tail in "${rowText}"`);
    assert.ok(rowText.includes(`${first.id} 50%`), `the client in "${rowText}"`);
    assert.match(rowText, /on, ours \(\S+\), for jobs/, 'the engine started it for its jobs (it stops with the last)');
    assert.match((await list.locator('.mps-slices-head').textContent()) ?? '', /^MPS\s*whole GPU: off$/, 'the whole-GPU daemon\'s state comes first');

    // a second job dropped on the same slice: the prompt offers to join the daemon that runs there
    const second = await submitForMigGpu();
    await live('.job-board');
    const secondCard = h.page.locator(`.job-card[data-job="${second.id}"]`);
    await secondCard.waitFor({ timeout: 15_000 });
    await live('.gpu-grid');
    await secondCard.dragTo(tile(uuid));
    await prompt.waitFor({ timeout: 5000 });
    assert.equal(await prompt.getByLabel('Job', { exact: true }).inputValue(), second.id, 'the dropped job is the one chosen');
    assert.equal(await shares.isChecked(), true, 'a slice whose daemon runs is shared by default');
    await share.fill('30');
    await h.screenshot('mig-mps-second-prompt');
    await prompt.getByRole('button', { name: 'Run in slice under MPS' }).click();
    await prompt.waitFor({ state: 'detached' });
    const joined = await eventually(async () => {
      const j = await jobById(second.id);
      return j?.mode === 'mig' && j.pid ? j : null;
    }, 15_000, `${second.id} in mode mig and started`);
    assert.deepEqual([joined.migSlice, joined.mpsSharePercent], [uuid, 30]);
    const both = await eventually(() => {
      const d = driverDaemon(2);
      return d?.running && d.clients.some((c) => c.pid === joined.pid) ? d : null;
    }, 15_000, `pid ${joined.pid} a client of the same daemon`);
    assert.equal(both.pid, daemon.pid, 'the same daemon serves both');
    assert.deepEqual(both.clients.map((c) => [c.pid, c.share]).sort(), [[inSlice.pid, 50], [joined.pid, 30]].sort());
    const engineSlices = (await h.engine.call('mps.status', {})).find((m) => m.gpu === 1)?.slices ?? [];
    assert.deepEqual(engineSlices.map((s) => s.uuid), [uuid], 'one slice daemon in mps.status');

    await eventually(async () => (await mark.innerText()).includes(`${second.id} 30%`), 10_000, `${second.id} 30% on the mark`);
    assert.match(await mark.innerText(), new RegExp(`${first.id} 50%.*${second.id} 30%`, 's'));
    assert.ok((await row.innerText()).includes(`${second.id} 30%`));
    assert.match((await tile(uuid).getAttribute('aria-label')) ?? '', new RegExp(`MPS daemon with 2 clients: ${first.id} 50 %, ${second.id} 30 % of its SMs`));
    await h.screenshot('mig-mps-two-clients');
  });

  test('a narrow 1g slice shares through MPS too (from the keyboard: Enter on the slice, pick, share): its mark stays inside the tile, counting its clients, with the clients and shares in its label', async () => {
    const uuid = await sliceUuid(3); // a 1g.10gb, one memory slice wide
    const job = await submitForMigGpu();
    await live('.gpu-grid');
    await eventually(async () => (await jobById(job.id))?.state === 'queued', 5000, `${job.id} queued`);
    await tile(uuid).focus();
    await h.page.keyboard.press('Enter');
    const prompt = card().locator('.mig-slice-prompt');
    await prompt.getByLabel('Job', { exact: true }).selectOption(job.id);
    await prompt.getByRole('checkbox', { name: 'Share the slice through MPS' }).check();
    await prompt.getByRole('textbox', { name: 'SM share of the slice in percent' }).fill('25');
    await prompt.getByRole('button', { name: 'Run in slice under MPS' }).click();
    await prompt.waitFor({ state: 'detached' });
    const started = await eventually(async () => {
      const j = await jobById(job.id);
      return j?.pid ? j : null;
    }, 15_000, `${job.id} started`);
    assert.deepEqual([started.mode, started.migSlice, started.mpsSharePercent], ['mig', uuid, 25]);
    await eventually(() => driverDaemon(3)?.clients.some((c) => c.pid === started.pid && c.share === 25), 15_000, `pid ${started.pid} a 25 % client of the 1g slice's daemon`);

    const mark = tile(uuid).locator('.mig-mps');
    // the daemon can reach the console before the job's start does: the mark reads "MPS 0" until the jobs feed catches up
    await eventually(async () => (await mark.textContent({ timeout: 1000 }).catch(() => '')) === 'MPS 1', 15_000, 'the MPS mark on the 1g slice counting its client');
    const fits = await mark.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const outer = el.closest('.mig-slice')!.getBoundingClientRect();
      return { inside: box.left >= outer.left - 0.5 && box.right <= outer.right + 0.5, clipped: el.scrollWidth > el.clientWidth + 1, text: el.textContent, title: el.getAttribute('title') };
    });
    assert.ok(fits.inside, `the mark stays inside its tile: ${JSON.stringify(fits)}`);
    assert.equal(fits.clipped, false, `the narrow mark's text is not cut: ${JSON.stringify(fits)}`);
    assert.equal(fits.text, 'MPS 1', 'a narrow tile counts the clients');
    assert.equal(fits.title, `MPS daemon with 1 client: ${job.id} 25 % of its SMs`);
    assert.match((await tile(uuid).getAttribute('aria-label')) ?? '', new RegExp(`MPS daemon with 1 client: ${job.id} 25 % of its SMs`));
    await h.screenshot('mig-mps-narrow');
  });

  test("the whole GPU's MPS zone says why the engine's daemon runs: for jobs while an MPS job's share started it (off again after it ends), on request after Start MPS", async () => {
    const zone = h.page.locator('.gpu-card[data-gpu="0"] .mps-zone');
    const status = zone.locator('.mps-status');
    await live('.gpu-grid');
    await eventually(async () => (await zone.getAttribute('data-mps-state')) === 'off', 10_000, 'the MPS zone of GPU 0 to show off');
    const job = await h.engine.call('jobs.submit', { argv: [h.driver.libDir + '/fakejob', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '120'], gpu: 0, mode: 'mps', mpsSharePercent: 30 });
    await eventually(async () => (await jobById(job.id))?.pid, 15_000, `${job.id} to start under MPS`);
    assert.equal((await h.engine.call('mps.status', {})).find((m) => m.gpu === 0)?.startedFor, 'jobs');
    await eventually(async () => /^on, ours \(\S+\), for jobs/.test((await status.textContent()) ?? ''), 15_000, 'the zone to say the daemon runs for jobs');
    await h.engine.call('jobs.terminate', { job: job.id });
    await eventually(async () => (await zone.getAttribute('data-mps-state')) === 'off', 15_000, 'the zone to show off once the last client ended');

    await zone.getByRole('button', { name: 'Start MPS' }).click();
    await eventually(async () => /^on, ours \(\S+\), on request/.test((await status.textContent()) ?? ''), 15_000, 'the zone to say the daemon runs on request');
    assert.equal((await h.engine.call('mps.status', {})).find((m) => m.gpu === 0)?.startedFor, 'request');
    await zone.getByRole('button', { name: 'Stop MPS' }).click();
    await eventually(async () => (await zone.getAttribute('data-mps-state')) === 'off', 15_000, 'the zone to show off after Stop MPS');
  });

  test("a running best-effort MPS job dragged onto High moves its lane in the engine, and a notice says its MPS clients keep client priority below normal (CUDA reads it only when a client connects)", async () => {
    const job = await h.engine.call('jobs.submit', { argv: [h.driver.libDir + '/fakejob', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '120'], gpu: 0, mode: 'mps', mpsSharePercent: 30, priority: 'best-effort' });
    await eventually(async () => (await jobById(job.id))?.pid, 15_000, `${job.id} to start under MPS`);
    assert.equal((await jobById(job.id))?.mpsClientPriority, 'below-normal');
    await h.page.locator('.job-board').scrollIntoViewIfNeeded();
    const card = h.page.locator(`.job-card[data-job="${job.id}"]`);
    await card.waitFor({ timeout: 15_000 });
    await card.dragTo(h.page.locator('.lane[data-lane="high"]'));
    const notice = h.page.locator('.notice.notice-info', { hasText: `${job.id}'s MPS clients keep client priority below normal` });
    await notice.waitFor({ timeout: 10_000 });
    assert.match(await notice.innerText(), /CUDA MPS reads CUDA_MPS_CLIENT_PRIORITY only when a client connects\. Its lane \(the gate\) and CPU priority are high now/);
    const moved = await jobById(job.id);
    assert.deepEqual([moved?.priority, moved?.mpsClientPriority], ['high', 'below-normal']);
    await h.screenshot('mps-priority-kept-notice');
    await h.engine.call('jobs.terminate', { job: job.id });
    await eventually(async () => !(await jobById(job.id)) || ['finished', 'failed'].includes((await jobById(job.id))!.state), 15_000, `${job.id} to end`);
  });
});
