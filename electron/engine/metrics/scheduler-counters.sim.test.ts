// The scheduler's counters as the metrics endpoint shows them, from real managed jobs on the
// simulated driver with the launch gate: allocations a quota refused, and a best-effort job gated
// behind a high-priority one.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fakegpuBuildDir } from '../paths.js';
import { schedulerRig, type SchedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig, type SimulatedRig } from '../testing/simulated-rig.js';
import { engineMetricsSources } from './attach-metrics.js';
import { GpushareMetrics } from './gpushare-metrics.js';
import { parseExposition, seriesOf } from './testing/exposition.js';

const GiB = 1024 ** 3;
const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
let box: SimulatedRig;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-counters-', (rig) => (box = rig));

/** A scheduler with the real launch gate; its jobs' processes are killed after the test. */
async function gatedRig(t: TestContext, name: string): Promise<SchedulerRig> {
  const rig = schedulerRig(box, name, { gate: undefined }, cleanups);
  await rig.attached.ready;
  assert.equal(rig.attached.gateMissing, null, 'the preload library is built');
  t.after(() => {
    for (const r of rig.attached.scheduler.table.all()) {
      try {
        if (r.view.pid !== null) process.kill(r.view.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  return rig;
}

async function counter(rig: SchedulerRig, name: string): Promise<number[]> {
  const metrics = new GpushareMetrics(engineMetricsSources(rig.engine, rig.attached.scheduler));
  return seriesOf(parseExposition(await metrics.render()), name).map((s) => s.value);
}

test('allocations a job quota refused are counted, those of a job that ended too', async (t) => {
  const rig = await gatedRig(t, 'quota');
  const alloc = (count: number, hold: boolean) => [FAKEJOB, 'alloc', '--chunk', '512M', '--count', String(count), ...(hold ? ['--hold'] : [])];
  assert.deepEqual(await counter(rig, 'gpushare_quota_refusals_total'), [0]);
  await rig.engine.call('jobs.submit', { argv: alloc(4, true), cwd: box.dir, gpu: 0, memoryQuotaBytes: GiB }); // 2 of 4 refused, then it holds on
  await rig.engine.call('jobs.submit', { argv: alloc(3, false), cwd: box.dir, gpu: 0, memoryQuotaBytes: GiB }); // 1 of 3 refused, then it exits
  await rig.until('j2 ended', async () => (await rig.job('j2'))?.state === 'finished');
  await rig.until('three refusals counted', async () => rig.attached.scheduler.counters.quotaRefusals === 3);
  for (let i = 0; i < 3; i++) await rig.tick(); // j1 stays over its quota: nothing is counted twice
  assert.deepEqual(await counter(rig, 'gpushare_quota_refusals_total'), [3]);
});

test('a best-effort job gated behind a high-priority one is a gate wait', async (t) => {
  const rig = await gatedRig(t, 'gate');
  const train = [FAKEJOB, '--mem', '256M', 'train', '--kernel-ms', '5', '--duration', '60'];
  assert.deepEqual(await counter(rig, 'gpushare_gate_waits_total'), [0]);
  await rig.engine.call('jobs.submit', { argv: train, cwd: box.dir, gpu: 0, priority: 'best-effort' });
  await rig.until('j1 running', async () => (await rig.job('j1'))?.state === 'running');
  await rig.engine.call('jobs.submit', { argv: train, cwd: box.dir, gpu: 0, priority: 'high' });
  await rig.until('j1 gated', async () => (await rig.job('j1'))?.state === 'gated');
  const metrics = new GpushareMetrics(engineMetricsSources(rig.engine, rig.attached.scheduler));
  const rendered = metrics.render(); // its values are read before it first waits: the same moment as the history below
  const gated = rig.attached.scheduler.table.get('j1')!.view.history.filter((h) => h.state === 'gated').length;
  assert.deepEqual(seriesOf(parseExposition(await rendered), 'gpushare_gate_waits_total').map((s) => s.value), [gated], 'one per time it was gated, as its history shows');
  assert.ok(gated >= 1);
});
