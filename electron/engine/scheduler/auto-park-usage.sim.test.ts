// Usage recorded while auto-park moves memory: every sample the engine takes is published, so the usage
// store accounts every interval of a job's GPU time once. A park's or restore's fresh sample taken
// privately would start the next published interval after it, and the time between the last published
// sample and the private one would be recorded for nobody (issue 25).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { queryUsage } from '../reports/query.js';
import { UsageStore } from '../store/usage-store.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { untilWith } from '../../testing/until.js';

const GiB = 1024 ** 3;
const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
/** Long intervals: a lost stretch of one is large against the bound (one interval). */
const RATE_HZ = 1;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-autopark-usage-', (rig) => ({ driver, nvml, dir } = rig));

/** A notebook holding 30 GiB that runs a cell only when woken (SIGUSR1): its first CUDA call after a park is its ask. */
const notebook = [FAKEJOB, '--mem', '30G', 'interactive', '--burst-ms', '20', '--kernel-ms', '5', '--idle-ms', '600000', '--duration', '600'];
const ended = (j: JobView | undefined) => j?.state === 'finished' || j?.state === 'failed';
const CYCLES = 4;

test('the usage recorded for a job computing beside an auto-parked notebook equals the driver’s execution record within one sampling interval', async () => {
  // gate: undefined — the real launch gate and preload library (a parked notebook's next call is its ask)
  const r = schedulerRig({ driver, nvml, dir }, 'usage', { gate: undefined, autoPark: { idleMs: 300, wakePollMs: 10 } }, cleanups);
  const store = await UsageStore.open({ path: join(dir, 'usage.db') });
  cleanups.push(() => store.close());
  const published: number[] = [];
  r.engine.sampler.onSnapshot((snapshot) => {
    store.ingest(snapshot);
    published.push(snapshot.takenAt);
  });
  r.engine.sampler.setRate(RATE_HZ);
  const startedAt = Date.now();
  r.engine.sampler.start(); // the engine's own loop: nothing else samples but what auto-park asks for
  cleanups.push(() => r.engine.sampler.stop());
  const submit = (argv: string[], requestBytes: number) => r.engine.call('jobs.submit', { argv, cwd: dir, gpu: 0, memoryRequestBytes: requestBytes });
  const job = async (id: string) => (await r.engine.call('jobs.list', { includeFinished: true })).find((j) => j.id === id);
  const waitFor = untilWith({ timeoutMs: 60_000, intervalMs: 20, detail: async () => JSON.stringify((await r.engine.call('jobs.list', { includeFinished: true })).map((j) => [j.id, j.state, j.history.at(-1)?.reason])) });
  const afterTicks = async (n: number) => {
    const seen = published.length;
    await waitFor(`${n} more samples`, async () => published.length >= seen + n);
  };

  // the witness computes throughout, beside a notebook parked for a short job and restored mid-interval, again and again
  const witness = await submit([FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '600'], GiB);
  const nb = await submit(notebook, 30 * GiB);
  const running = await waitFor('the notebook holding its memory', async () => {
    const j = await job(nb.id);
    return j?.usedMemory === 30 * GiB ? j : undefined;
  });
  for (let i = 0; i < CYCLES; i++) {
    const other = await submit([FAKEJOB, '--mem', '30G', 'hold', '--duration', '0.3'], 30 * GiB);
    await waitFor(`cycle ${i}: the short job finished in the parked notebook's memory`, async () => ended(await job(other.id)));
    await afterTicks(2); // the freed memory is seen: the restore will not wait for it
    await new Promise((w) => setTimeout(w, 0.6 * (1000 / RATE_HZ) - (Date.now() - published.at(-1)!))); // well inside an interval
    process.kill(running.pid!, 'SIGUSR1'); // a cell: its first call asks for the memory back
    await waitFor(`cycle ${i}: the notebook restored`, async () => (await job(nb.id))?.state === 'running');
    await afterTicks(1);
  }
  await r.engine.call('jobs.terminate', { job: nb.id });
  await r.engine.call('jobs.terminate', { job: witness.id });
  const jobs = await waitFor('both jobs ended', async () => {
    const all = await Promise.all([witness.id, nb.id].map(job));
    return all.every(ended) ? (all as JobView[]) : undefined;
  });
  await afterTicks(2); // the exits are seen
  r.engine.sampler.stop();
  await store.flush();

  const restores = jobs[1].history.filter((h) => h.state === 'unparking' && /its program called CUDA again/.test(h.reason)).length;
  assert.equal(restores, CYCLES, `the notebook was parked and restored on its call ${CYCLES} times: ${JSON.stringify(jobs[1].history.map((h) => [h.state, h.reason]))}`);
  const pid = jobs[0].pid!;
  const executedS = (await driver.execlog(0)).filter((k) => k.pid === pid).reduce((sum, k) => sum + (k.endNs - k.startNs) / 1e9, 0);
  const report = await queryUsage(store.db, { since: startedAt - 60_000, until: Date.now() + 60_000, by: 'job' });
  const recordedS = report.rows.find((row) => row.key === `p${pid}`)?.smSeconds ?? 0;
  const intervalS = 1 / RATE_HZ;
  console.log(`witness ${pid}: ${recordedS.toFixed(3)} SM-seconds recorded, ${executedS.toFixed(3)} s in the driver's execution record, ${restores} restores`);
  assert.ok(Math.abs(recordedS - executedS) <= intervalS, `recorded ${recordedS.toFixed(3)} s of the witness's GPU time, the driver ran ${executedS.toFixed(3)} s: within one interval (${intervalS} s)`);
});
