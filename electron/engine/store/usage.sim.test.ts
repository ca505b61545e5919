// Fakejobs with known usage on the simulated driver, sampled by the real sampler through the
// addon and recorded by the store: the report matches what the jobs did within 2 % (SM-seconds: and a sampling interval at each end).
// What a job did on the GPU is the simulated driver's execution record: a kernel's recorded time stretches past its
// nominal length when the machine is loaded (the simulated GPU runs on the CPU), so the job's own busyMs is not the reference.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openNvml } from '../gpu/nvml-addon.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver } from '../gpu/simulated-driver.js';
import { queryUsage } from '../reports/query.js';
import { Sampler } from '../sampler/sampler.js';
import { UsageStore } from './usage-store.js';

const GiB = 2 ** 30;
const RATE_HZ = 10;
const DURATION_S = 8; // long against one sampling interval, so the edges stay well inside 2 %
const dir = mkdtempSync(join(tmpdir(), 'gpushare-usage-sim-'));
let driver: SimulatedDriver;
let nvml: NvmlBinding;

before(async () => {
  driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
  process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath;
  nvml = openNvml(driver.nvmlLibraryPath);
});

after(async () => {
  nvml?.close();
  await driver?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test('two training fakejobs sharing a GPU: SM-seconds from the driver’s execution record, GiB-hours from allocation × time', async () => {
  const store = await UsageStore.open({ path: join(dir, 'usage.db') });
  const sampler = new Sampler(nvml, { simulated: true, scenario: driver.scenario, rateHz: RATE_HZ });
  sampler.onSnapshot((snapshot) => store.ingest(snapshot));
  const startedAt = Date.now();
  sampler.start();
  const jobs = [
    { mem: GiB, handle: driver.spawnFakejob(['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', String(DURATION_S)]) },
    { mem: 2 * GiB, handle: driver.spawnFakejob(['--mem', '2G', 'train', '--kernel-ms', '5', '--duration', String(DURATION_S)]) },
  ];
  const done = await Promise.all(jobs.map((j) => j.handle.waitFor('done')));
  await Promise.all(jobs.map((j) => j.handle.exited));
  await new Promise((r) => setTimeout(r, 600)); // a few more ticks: the exits are seen
  sampler.stop();
  await store.flush();

  const executed = new Map<number, number>();
  for (const kernel of await driver.execlog(0)) executed.set(kernel.pid, (executed.get(kernel.pid) ?? 0) + (kernel.endNs - kernel.startNs) / 1e9);
  const report = await queryUsage(store.db, { since: startedAt - 60_000, until: Date.now() + 60_000, by: 'job' });
  let smTotal = 0;
  for (const [i, { mem, handle }] of jobs.entries()) {
    const row = report.rows.find((r) => r.key === `p${handle.pid}`);
    assert.ok(row, `a row for fakejob ${handle.pid}`);
    const nominalBusyS = Number(done[i].busyMs) / 1000;
    const busyS = executed.get(handle.pid) ?? 0;
    assert.ok(busyS >= nominalBusyS * 0.98, `the driver ran fakejob ${handle.pid}'s kernels (${busyS} s recorded, ${nominalBusyS} s nominal)`);
    const wallS = Number(done[i].wallMs) / 1000;
    const expectedGiBH = (mem / GiB) * (wallS / 3600);
    console.log(`fakejob ${handle.pid}: SM-seconds ${row.smSeconds.toFixed(3)} vs busy ${busyS.toFixed(3)} recorded (${nominalBusyS.toFixed(3)} nominal); ` +
      `GiB-hours ${row.memoryGiBHours.toFixed(6)} vs ${expectedGiBH.toFixed(6)}; GPU seconds ${row.gpuSeconds.toFixed(2)} vs wall ${wallS.toFixed(2)}; contention ${row.contentionMinutes.toFixed(3)} min`);
    // the two share one GPU: each gets half of it while both are listed, all of it alone (give or take a sampling interval at each end)
    const edgeS = 2 / RATE_HZ;
    // 2 %, plus what a late tick at either end can add: one interval each at the job's half share of the SMs
    assert.ok(Math.abs(row.smSeconds - busyS) <= 0.02 * busyS + edgeS / 2, `SM-seconds ${row.smSeconds} within 2 % of ${busyS} (± ${edgeS / 2} s at the edges)`);
    assert.ok(Math.abs(row.memoryGiBHours - expectedGiBH) <= 0.02 * expectedGiBH, `GiB-hours ${row.memoryGiBHours} within 2 % of ${expectedGiBH}`);
    assert.ok(row.gpuSeconds >= wallS / 2 - edgeS && row.gpuSeconds <= wallS + edgeS, `GPU seconds ${row.gpuSeconds} between half and all of ${wallS}`);
    assert.equal(row.peakMemoryBytes, mem);
    assert.ok(row.contentionMinutes * 60 >= 0.9 * Math.min(wallS, DURATION_S), 'both ran kernels on the same GPU: contended');
    smTotal += row.smSeconds;
  }
  const byUser = await queryUsage(store.db, { since: startedAt - 60_000, until: Date.now() + 60_000, by: 'user' });
  assert.equal(byUser.rows.length, 1);
  assert.ok(Math.abs(byUser.rows[0].smSeconds - smTotal) < 1e-9);
  const byGpu = await queryUsage(store.db, { since: startedAt - 60_000, until: Date.now() + 60_000, by: 'gpu' });
  assert.equal(byGpu.rows[0].label, 'GPU 0 · NVIDIA A100-SXM4-40GB');
  const jobsGpuS = jobs.reduce((sum, j) => sum + (report.rows.find((r) => r.key === `p${j.handle.pid}`)?.gpuSeconds ?? 0), 0);
  assert.ok(Math.abs(byGpu.rows[0].gpuSeconds - jobsGpuS) < 1e-9, `the GPU's time ${byGpu.rows[0].gpuSeconds} s is its jobs' shares summed (${jobsGpuS} s)`);
  await store.close();
});
