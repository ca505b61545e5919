// The browser console against the real engine on a simulated A100: what the page shows
// must be what the driver reports, live; drags must change the engine.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { JobView } from '../shared/jobs.js';
import { browserMissing, eventually, openConsoleHarness, sleep, type ConsoleHarness } from './harness.js';
import { assertUncovered } from './on-screen.js';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const missing = browserMissing();

/** "6.0 GiB" / "512 MiB" as the console prints sizes → [bytes, half the step it rounds to]. */
function shownSize(text: string): [bytes: number, slack: number] {
  const m = /^([\d.]+) (GiB|MiB)$/.exec(text.trim());
  assert.ok(m, `a size like "6.0 GiB", got "${text}"`);
  const unit = m[2] === 'GiB' ? GIB : MIB;
  const decimals = m[1].split('.')[1]?.length ?? 0;
  return [Number(m[1]) * unit, (unit / 10 ** decimals) / 2];
}

/** The console shows `text` for `bytes`: the same value, up to its rounding. */
function showsBytes(text: string, bytes: number): boolean {
  const [shown, slack] = shownSize(text);
  return Math.abs(shown - bytes) <= slack + 1;
}

describe('browser console on the simulated driver', { skip: missing ?? false, timeout: 180_000 }, () => {
  let h: ConsoleHarness;
  const jobs = async (): Promise<JobView[]> => h.engine.call('jobs.list', {});
  const jobById = async (id: string): Promise<JobView | undefined> => (await jobs()).find((j) => j.id === id);
  const submit = (argv: string[], priority: JobView['priority']): Promise<JobView> =>
    h.engine.call('jobs.submit', { argv: [h.driver.libDir + '/fakejob', ...argv], gpu: 0, priority });

  before(async () => {
    h = await openConsoleHarness('a100-40gb');
    const a = h.driver.spawnFakejob(['--mem', '6G', 'train', '--kernel-ms', '5', '--duration', '120']);
    const b = h.driver.spawnFakejob(['--mem', '3G', 'infer', '--rate', '40', '--kernel-ms', '4', '--duration', '120']);
    await Promise.all([a.ready, b.ready]);
    await h.page.goto(h.web.url);
  });
  after(async () => h?.close());

  test('the page shows the GPUs and processes the driver reports, with the driver\'s memory figures, under a Simulated GPUs banner', async () => {
    const state = await h.driver.dump();
    await h.page.locator('.simulated-banner').waitFor();
    assert.match(await h.page.locator('.simulated-banner').innerText(), /Simulated GPUs/i);
    await eventually(async () => (await h.page.locator('.gpu-card').count()) === state.devices.length, 10_000, 'one card per GPU');
    for (const device of state.devices) {
      const card = h.page.locator(`.gpu-card[data-gpu="${device.index}"]`);
      await card.scrollIntoViewIfNeeded();
      assert.match(await card.innerText(), new RegExp(device.name.replace(/[()]/g, '.')));
      // "used / total" on the card against the driver's own counters (both read live: the jobs hold steady);
      // NVML's v2 "used" leaves out what the driver reserves for itself, as the real driver does
      let seen = '';
      await eventually(async () => {
        seen = await card.locator('.memory-figures').innerText();
        const [used, total] = seen.split(' / ');
        const now = (await h.driver.dump()).devices[device.index];
        return showsBytes(total, now.memoryTotal) && showsBytes(used, now.memoryUsed - now.memoryReserved);
      }, 10_000, `GPU ${device.index}'s card to show the driver's used and total memory`).catch((error: Error) => {
        throw new Error(`${error.message} It shows "${seen}"; the driver: ${JSON.stringify({ used: device.memoryUsed, reserved: device.memoryReserved, total: device.memoryTotal })}`);
      });
    }
    // sections scrolled out of view stop updating until they come back, as a person would see them
    await h.page.locator('.process-panel').scrollIntoViewIfNeeded();
    for (const device of state.devices) {
      for (const process of device.processes) {
        const row = h.page.locator(`.process-table tr[data-pid="${process.pid}"]`);
        await row.waitFor({ timeout: 10_000 });
        const numbers = await row.locator('td.num').allInnerTexts(); // GPU, SM, memory, quota
        assert.equal(numbers[0], String(device.index), `pid ${process.pid} on GPU ${device.index}`);
        assert.ok(showsBytes(numbers[2], process.usedMemory), `pid ${process.pid} shows ${numbers[2]}; the driver says ${process.usedMemory} bytes`);
      }
    }
    await h.screenshot('console-overview');
  });

  test('the header says the console talks to a personal engine, and that only your own processes can be scheduled', async () => {
    // the harness's engine is a personal one (Engine's default kind), as `gpushare serve` and `start` run it
    assert.equal((await h.engine.call('session.whoami', {})).engine.kind, 'personal');
    const label = h.page.locator('.top-bar').getByText('personal engine: only your own processes can be scheduled', { exact: true });
    await label.waitFor({ timeout: 10_000 });
    assert.equal(await h.page.locator('.top-bar').getByText(/signed in as/).count(), 0, 'a personal engine\'s user is its owner: no "signed in as"');
    await h.screenshot('console-header-personal-engine');
  });

  test('the timelines move over three seconds', async () => {
    await h.page.getByRole('button', { name: '1 min' }).click();
    // the bands are painted on a canvas: what it shows is compared, pixel for pixel, with nothing drawn and over time
    const bands = h.page.locator('.timeline[data-metric="memory"] canvas.timeline-canvas');
    type Canvas = { width: number; height: number; toDataURL(): string; ownerDocument: { createElement(tag: 'canvas'): Canvas } };
    const blank = async (): Promise<string> => bands.evaluate((element) => {
      const c = element as unknown as Canvas;
      return Object.assign(c.ownerDocument.createElement('canvas'), { width: c.width, height: c.height }).toDataURL();
    });
    const shape = async (): Promise<string> => bands.evaluate((element) => (element as unknown as Canvas).toDataURL());
    await eventually(async () => (await bands.count()) > 0 && (await shape()) !== (await blank()), 10_000, 'a memory band drawn');
    const before = await shape();
    await sleep(3000);
    const after = await shape();
    assert.notEqual(after, before, 'the memory timeline changed');
    await h.screenshot('console-timelines');
  });

  test('a high-priority job beside the running ones raises a contention alert that the alert list shows', async () => {
    // the harness always runs the scheduler: the alert must come from it, never from the test
    await submit(['--mem', '2G', 'infer', '--rate', '40', '--kernel-ms', '4', '--duration', '120'], 'high');
    const alert = await eventually(async () => (await h.engine.call('alerts.list', {})).find((a) => a.kind === 'contention' && a.gpu === 0), 20_000, 'the scheduler to raise contention on GPU 0');
    await h.page.locator(`.alert[data-kind="contention"]:has-text(${JSON.stringify(alert.message.slice(0, 40))})`).first().waitFor({ timeout: 20_000 });
    await h.screenshot('console-contention');
  });

  test('a drop the engine refuses snaps back and shows the engine\'s message', async () => {
    await h.page.locator('.job-board').scrollIntoViewIfNeeded();
    const card = h.page.locator('.job-card').first();
    await card.waitFor();
    const id = await card.getAttribute('data-job');
    const lane = await card.getAttribute('data-lane');
    await card.dragTo(h.page.locator('.gpu-card[data-gpu="0"]'));
    const notice = h.page.locator('.notice[role="alert"]').last();
    await notice.waitFor({ timeout: 10_000 });
    assert.match(await notice.innerText(), new RegExp(`${id} could not be placed on GPU 0: .+`));
    assert.equal(await h.page.locator(`.job-card[data-job="${id}"]`).getAttribute('data-lane'), lane, 'the card is back in its lane');
    await assertUncovered(notice, h.page.locator('.gpu-card[data-gpu="0"]'));
    await assertUncovered(notice, h.page.locator(`.job-card[data-job="${id}"]`));
    await h.screenshot('console-refused-drop');
  });

  /** The card of a job, once the board (which pauses while scrolled out of view) shows it. */
  const cardOf = async (id: string) => {
    await h.page.locator('.job-board').scrollIntoViewIfNeeded();
    const card = h.page.locator(`.job-card[data-job="${id}"]`);
    await card.waitFor({ timeout: 15_000 });
    return card;
  };
  /** Drag a card's quota handle to `fraction` of its bar with the mouse, as a person would. */
  const dragQuotaHandle = async (card: Awaited<ReturnType<typeof cardOf>>, fraction: number): Promise<void> => {
    const bar = await card.locator('.quota-bar').boundingBox();
    const handle = await card.locator('.quota-handle').boundingBox();
    assert.ok(bar && handle);
    await h.page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
    await h.page.mouse.down();
    await h.page.mouse.move(bar.x + bar.width * fraction, handle.y + handle.height / 2, { steps: 8 });
    await h.page.mouse.up();
  };
  const smOf = (job: JobView | undefined): number => {
    const process = h.engine.sampler.latest?.processes.find((p) => p.pid === job?.pid);
    return process?.smPercent ?? 0;
  };

  test('a best-effort job dragged onto High gets high priority in the engine and a bigger SM share', async (t) => {
    await submit(['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '120'], 'normal');
    const job = await submit(['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '120'], 'best-effort');
    const card = await cardOf(job.id);
    await eventually(async () => (await jobById(job.id))?.pid, 15_000, `${job.id} to start`);
    await sleep(2000);
    const smBefore = smOf(await jobById(job.id));
    await card.dragTo(h.page.locator('.lane[data-lane="high"]'));
    await eventually(async () => ((await h.cli(['jobs', '--json'])) as JobView[]).find((j) => j.id === job.id)?.priority === 'high', 10_000, `${job.id} priority high in \`gpushare jobs --json\``);
    const smAfter = await eventually(async () => {
      const sm = smOf(await jobById(job.id));
      return sm > smBefore + 20 ? sm : 0;
    }, 20_000, `${job.id}'s SM share to grow from ${smBefore}%`);
    t.diagnostic(`SM share of ${job.id}: ${smBefore}% as best-effort, ${smAfter}% on High`);
    assert.equal(await card.getAttribute('data-lane'), 'high');
    await h.screenshot('console-dragged-to-high');
  });

  test('the keyboard does what a drag does: H moves a card to High, arrows + Enter set a quota', async (t) => {
    const job = await submit(['--mem', '1G', 'hold', '--duration', '120'], 'best-effort');
    const card = await cardOf(job.id);
    await card.focus();
    await h.page.keyboard.press('h');
    await eventually(async () => (await jobById(job.id))?.priority === 'high', 10_000, `${job.id} high after pressing H`);
    // a card moving lanes is drawn anew (the queue to High, as the job starts): the keys must go to the card that stays
    await eventually(async () => ((await card.getAttribute('data-lane')) === 'high' && (await jobById(job.id))?.pid ? true : undefined), 10_000, `${job.id} running, its card on High`);
    const handle = card.locator('.quota-handle');
    await handle.focus();
    for (let i = 0; i < 8; i++) await h.page.keyboard.press('Shift+ArrowLeft'); // 40 GiB − 8 GiB
    await h.page.keyboard.press('Enter');
    const quota = await eventually(async () => (await jobById(job.id))?.memoryQuotaBytes, 10_000, `${job.id} to get a quota`);
    assert.equal(quota, (await h.driver.dump()).devices[0].memoryTotal - 8 * GIB);
  });

  test('dragging the quota handle applies the quota', async (t) => {
    const job = await submit(['--mem', '2G', 'hold', '--duration', '120'], 'normal');
    const card = await cardOf(job.id);
    await dragQuotaHandle(card, 0.25);
    const capacity = (await h.driver.dump()).devices[0].memoryTotal;
    const quota = await eventually(async () => (await jobById(job.id))?.memoryQuotaBytes, 10_000, `${job.id} to get a quota`);
    assert.ok(Math.abs(quota - capacity * 0.25) <= 512 * 1024 ** 2, `quota ${quota} near a quarter of ${capacity}`);
    await h.screenshot('console-quota-dragged');
  });

  test('an allocation past a dragged quota fails', async (t) => {
    // a hard limit on cuMemAlloc comes from the launch gate (libgpushare-preload); without it the
    // scheduler only enforces quotas reactively, after a grace period
    if (h.scheduler?.gateMissing) return t.skip(`the launch gate is off here: ${h.scheduler.gateMissing}`);
    // the earlier tests' quotas are memory their jobs declared, spoken for on GPU 0: end those jobs
    const earlier = (await jobs()).filter((j) => j.managed && j.memoryQuotaBytes !== null);
    await Promise.all(earlier.map((j) => h.engine.call('jobs.terminate', { job: j.id })));
    await eventually(async () => (await jobs()).every((j) => !earlier.some((e) => e.id === j.id)), 10_000, 'the earlier jobs with quotas to end');
    // high: no higher job may gate it while it allocates
    const job = await submit(['alloc', '--after', '3', '--chunk', '1G', '--count', '14'], 'high');
    const card = await cardOf(job.id);
    // started first: it allocates 3 s after it starts, the quota comes in between
    await eventually(async () => (await jobById(job.id))?.pid, 3000, `${job.id} to start`);
    // it starts an evaluation after its submit: once its card has moved from the queue to High, or the drag lands where it was
    await eventually(async () => ((await card.getAttribute('data-lane')) === 'high' ? true : undefined), 5000, `${job.id}'s card on High`);
    await dragQuotaHandle(card, 0.25);
    const quota = await eventually(async () => (await jobById(job.id))?.memoryQuotaBytes, 10_000, `${job.id} to get a quota`);
    const log = (await jobById(job.id))?.logPath;
    assert.ok(log, `${job.id} has a log`);
    const lines = await eventually(async () => {
      const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
      return /"event":"meminfo"/.test(text) ? text.split('\n') : null;
    }, 20_000, `${job.id} to finish allocating (its log ${log})`).catch(async (error: Error) => {
      const now = await jobById(job.id);
      const text = existsSync(log) ? readFileSync(log, 'utf8').slice(-600) : '(no log)';
      throw new Error(`${error.message} It is ${now?.state} (${now?.history.at(-1)?.reason}); its log ends: ${text}`);
    });
    assert.ok(lines.some((l) => l.includes('"event":"waiting"')), 'it waited before allocating');
    const allocs = lines.filter((l) => l.includes('"event":"alloc"')).map((l) => JSON.parse(l) as { result: string; total: number });
    const firstFailure = allocs.findIndex((a) => a.result === 'CUDA_ERROR_OUT_OF_MEMORY');
    assert.ok(firstFailure > 0, `an allocation failed with CUDA_ERROR_OUT_OF_MEMORY: ${allocs.map((a) => a.result).join(' ')}`);
    assert.ok(allocs[firstFailure - 1].total <= quota, `it held ${allocs[firstFailure - 1].total} bytes within its ${quota}-byte quota`);
    t.diagnostic(`${job.id}: quota ${(quota / GIB).toFixed(1)} GiB, allocation ${firstFailure + 1} of 1 GiB failed`);
    await h.screenshot('console-quota-allocation-refused');
  });
  test('Park on a running job\'s card takes its memory off the GPU (per the driver); K on the card unparks it', async (t) => {
    const job = await submit(['--mem', '2G', 'train', '--kernel-ms', '5', '--duration', '120'], 'normal');
    const card = await cardOf(job.id);
    const pid = await eventually(async () => (await jobById(job.id))?.pid, 15_000, `${job.id} to start`);
    const onDriver = async () => (await h.driver.dump()).devices[0].processes.find((p) => p.pid === pid);
    await eventually(async () => (await onDriver())?.usedMemory === 2 * GIB, 15_000, `${job.id}'s 2 GiB on GPU 0 per the driver`);

    await card.getByRole('button', { name: 'Park' }).click();
    const parked = await eventually(async () => {
      const p = await onDriver();
      return p && p.usedMemory === 0 && p.checkpointState === 'checkpointed' ? p : null;
    }, 20_000, `the driver to hold 0 bytes on GPU 0 for ${job.id} (checkpointed)`);
    assert.equal(parked.parkedMemory, 2 * GIB, 'its 2 GiB wait in host memory');
    await eventually(async () => (await card.locator('.state').innerText()) === 'parked', 10_000, 'the card to say parked');
    const gpuCard = h.page.locator('.gpu-card[data-gpu="0"]');
    await gpuCard.scrollIntoViewIfNeeded();
    await eventually(async () => {
      const now = (await h.driver.dump()).devices[0];
      return showsBytes((await gpuCard.locator('.memory-figures').innerText()).split(' / ')[0], now.memoryUsed - now.memoryReserved);
    }, 10_000, 'GPU 0\'s card to show the driver\'s used memory without the parked 2 GiB');
    await cardOf(job.id);
    assert.equal((await jobById(job.id))?.state, 'parked');
    await h.screenshot('console-parked');

    await card.getByRole('button', { name: 'Unpark' }).waitFor();
    await card.focus();
    await h.page.keyboard.press('k');
    await eventually(async () => {
      const p = await onDriver();
      return p?.usedMemory === 2 * GIB && p.checkpointState === 'running';
    }, 20_000, `${job.id}'s 2 GiB back on GPU 0 per the driver`);
    // back where it was: running, or gated when a higher-priority job from an earlier test runs on GPU 0
    await eventually(async () => ['running', 'gated'].includes((await jobById(job.id))?.state ?? ''), 10_000, `${job.id} running (or gated) again`);
    await card.getByRole('button', { name: 'Park' }).waitFor();
  });
  test('a GPU the driver loses: one gpu-lost alert, a condition on the page while it lasts, gone once it is back', async () => {
    const lostAlerts = async () => (await h.engine.call('alerts.list', {})).filter((a) => a.kind === 'gpu-lost' && a.gpu === 0);
    assert.equal((await lostAlerts()).length, 0);
    await h.page.locator('.alert-panel').scrollIntoViewIfNeeded();
    await h.driver.fault(['--device', '0', '--lost', 'on']);
    try {
      await h.page.locator('.condition[data-kind="gpu-lost"]').waitFor({ timeout: 15_000 });
      const seq = h.engine.sampler.latest!.seq;
      await eventually(() => h.engine.sampler.latest!.seq >= seq + 3, 15_000, 'three more ticks with GPU 0 lost');
      assert.equal((await lostAlerts()).length, 1, 'one alert for the onset, none while it stays lost');
      assert.deepEqual((await h.engine.call('alerts.active', {})).filter((c) => c.kind === 'gpu-lost').map((c) => c.gpu), [0]);
      await h.screenshot('console-gpu-lost');
    } finally {
      await h.driver.fault(['--device', '0', '--lost', 'off']);
    }
    await h.page.locator('.condition[data-kind="gpu-lost"]').waitFor({ state: 'detached', timeout: 15_000 });
    assert.equal((await h.engine.call('alerts.active', {})).some((c) => c.kind === 'gpu-lost'), false);
    assert.equal((await lostAlerts()).length, 1);
  });
});
