// A real Prometheus server (Debian's `prometheus`) scrapes the metrics endpoint of an engine on the
// simulated driver; its HTTP API must then give each user's GPU memory as the driver's state has it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig, type SimulatedRig } from '../testing/simulated-rig.js';
import { attachMetrics } from './attach-metrics.js';
import { processUser } from './gpushare-metrics.js';
import { prometheusMissing, query, startPrometheus, type VectorSample } from './testing/prometheus.js';

const MiB = 1024 ** 2;
const POLL_LIMIT_MS = 30_000;
let box: SimulatedRig;
const cleanups = useSimulatedRig('h100x2-mig', 'gpushare-prometheus-', (rig) => (box = rig));

test('Prometheus scrapes the endpoint: each user\'s GPU memory in its API is the sum of their processes\' memory in the driver\'s snapshot', { skip: prometheusMissing }, async (t) => {
  const rig = schedulerRig(box, 'prometheus', {}, cleanups);
  await rig.attached.ready;
  rig.engine.start();
  t.after(() => rig.engine.stop());
  const holders: ChildProcess[] = [];
  const hold = async (device: number, mem: number, uid?: number, mig?: number) => {
    const child = spawn('sleep', ['600'], { stdio: 'ignore', ...(uid === undefined ? {} : { uid, gid: uid }) });
    holders.push(child);
    await box.driver.attach({ device, pid: child.pid!, mem, ...(mig === undefined ? {} : { mig }) });
  };
  t.after(() => holders.forEach((h) => h.kill('SIGKILL')));
  await hold(0, 300 * MiB);
  await hold(0, 40 * MiB);
  if (process.getuid?.() === 0) await hold(1, 200 * MiB, 65534, 3); // another user, in a MIG slice of GPU 1

  const metrics = await attachMetrics(rig.engine, rig.attached.scheduler, { host: '127.0.0.1', port: 0 });
  t.after(() => metrics.close());
  const target = new URL(metrics.url).host;
  const server = await startPrometheus(
    join(box.dir, 'prometheus'),
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: gpushare\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  t.after(() => server.stop());
  const base = server.base;

  // the sampler sees every holder, then Prometheus has scraped it: bounded polls, no timing asserted
  let series: VectorSample[] = [];
  let expected = new Map<string, number>();
  const deadline = Date.now() + POLL_LIMIT_MS;
  for (;;) {
    const snapshot = rig.engine.sampler.latest;
    if (snapshot && holders.every((h) => snapshot.processes.some((p) => p.pid === h.pid))) {
      expected = new Map();
      for (const p of snapshot.processes) expected.set(processUser(p), (expected.get(processUser(p)) ?? 0) + (p.usedMemory ?? 0));
      series = await query(base, 'gpushare_user_memory_used_bytes{job="gpushare"}').catch(() => []);
      if ([...expected].every(([user, bytes]) => series.some((s) => s.metric.user === user && Number(s.value[1]) === bytes))) break;
    }
    if (Date.now() > deadline || server.exitCode() !== null) {
      assert.fail(`no matching per-user series from Prometheus within ${POLL_LIMIT_MS / 1000} s: expected ${JSON.stringify([...expected])}, got ${JSON.stringify(series)}; prometheus exited ${server.exitCode()}; its log:\n${server.log()}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.equal(expected.size, process.getuid?.() === 0 ? 2 : 1, 'users with GPU processes');
  assert.equal(expected.get(processUser(rig.engine.sampler.latest!.processes.find((p) => p.pid === holders[0].pid)!)), 340 * MiB, 'both of the first user\'s processes count');
  for (const s of series) assert.equal(s.metric.instance, target, 'the series is the engine\'s target');

  const up = await query(base, 'up{job="gpushare"}');
  assert.deepEqual(up.map((s) => s.value[1]), ['1']);
  const processes = await query(base, 'gpushare_process_memory_used_bytes');
  assert.ok(processes.length >= holders.length);
  assert.ok(processes.every((s) => s.metric.job === 'gpushare' && /^p\d+$/.test(s.metric.job_id ?? '') && !('exported_job' in s.metric)), 'our job_id beside Prometheus\'s job');
});
