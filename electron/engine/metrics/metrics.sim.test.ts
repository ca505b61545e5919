// The metrics endpoint of an engine and its scheduler on the simulated driver, scraped over HTTP:
// what the series say, that a departed process's series go, promtool's verdict, and that every
// metric the Grafana dashboard queries exists.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { packageRoot } from '../paths.js';
import { schedulerRig, type SchedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig, type SimulatedRig } from '../testing/simulated-rig.js';
import { attachMetrics } from './attach-metrics.js';
import type { MetricsListener } from './metrics-server.js';
import { parseExposition, seriesOf, type Sample } from './testing/exposition.js';

const MiB = 1024 ** 2;
let box: SimulatedRig;
const cleanups = useSimulatedRig('h100x2-mig', 'gpushare-metrics-', (rig) => (box = rig));

interface Endpoint {
  rig: SchedulerRig;
  metrics: MetricsListener;
  scrape(accept?: string): Promise<{ text: string; contentType: string; samples: Sample[] }>;
}

async function endpoint(name: string): Promise<Endpoint> {
  const rig = schedulerRig(box, name, {}, cleanups);
  await rig.attached.ready;
  const metrics = await attachMetrics(rig.engine, rig.attached.scheduler, { host: '127.0.0.1', port: 0 });
  cleanups.push(() => metrics.close());
  const scrape = async (accept?: string) => {
    const response = await fetch(metrics.url, { headers: accept ? { accept } : {} });
    assert.equal(response.status, 200);
    const text = await response.text();
    return { text, contentType: response.headers.get('content-type') ?? '', samples: parseExposition(text) };
  };
  return { rig, metrics, scrape };
}

/** GPU 1 of the scenario is in MIG mode: a process there runs in GPU instance 3 (a 1g.10gb slice). */
const MIG_INSTANCE = 3;

/** A sleeping process holding `mem` bytes on `device` of the simulated GPUs, as `uid` where given; killed after the test. */
async function holder(t: TestContext, device: number, mem: number, uid?: number): Promise<ChildProcess> {
  const child = spawn('sleep', ['600'], { stdio: 'ignore', ...(uid === undefined ? {} : { uid, gid: uid }) });
  t.after(() => void child.kill('SIGKILL'));
  await box.driver.attach({ device, pid: child.pid!, mem, ...(device === 1 ? { mig: MIG_INSTANCE } : {}) });
  return child;
}

const asRoot = process.getuid?.() === 0;

test('per-user memory is the sum of that user\'s processes in the snapshot; a process is labelled with its command name, job, state and priority', async (t) => {
  const { rig, scrape } = await endpoint('users');
  const mine = await holder(t, 0, 300 * MiB);
  const other = asRoot ? await holder(t, 1, 200 * MiB, 65534) : null;
  await rig.until('the holders as jobs', async () => (await rig.job(`p${mine.pid}`)) && (!other || (await rig.job(`p${other.pid}`))));
  const snapshot = rig.engine.sampler.latest!;
  const { samples } = await scrape();

  const users = new Set(snapshot.processes.map((p) => p.user));
  assert.ok(users.size >= (asRoot ? 2 : 1));
  for (const user of users) {
    const expected = snapshot.processes.filter((p) => p.user === user).reduce((sum, p) => sum + (p.usedMemory ?? 0), 0);
    assert.deepEqual(seriesOf(samples, 'gpushare_user_memory_used_bytes', { user: user! }).map((s) => s.value), [expected], `user ${user}`);
  }
  const [process] = seriesOf(samples, 'gpushare_process_memory_used_bytes', { pid: String(mine.pid) });
  assert.deepEqual(process.labels, { gpu: '0', pid: String(mine.pid), job_id: `p${mine.pid}`, user: snapshot.processes.find((p) => p.pid === mine.pid)!.user!, command: 'sleep', container: '', priority: 'normal', state: 'running' });
  assert.equal(process.value, 300 * MiB);
  assert.deepEqual(seriesOf(samples, 'gpushare_job_memory_used_bytes', { job_id: `p${mine.pid}` }).map((s) => s.value), [300 * MiB]);
  assert.deepEqual(seriesOf(samples, 'gpushare_gpu_mig_slices').map((s) => [s.labels.gpu, s.value]), [['0', 0], ['1', 4]], 'the scenario: GPU 1 in MIG mode with 4 slices');
  assert.equal(seriesOf(samples, 'gpushare_mig_slice_memory_total_bytes', { gpu: '1' }).length, 4);
  assert.equal(seriesOf(samples, 'gpushare_engine_info', { simulated: 'true' }).length, 1, 'simulated GPUs say so');
});

test('a departed process takes its process, job and user series with it at the next scrape', async (t) => {
  const { rig, scrape } = await endpoint('departed');
  const staying = await holder(t, 0, 100 * MiB);
  const leaving = await holder(t, 1, 150 * MiB, asRoot ? 65534 : undefined);
  await rig.until('both holders as jobs', async () => (await rig.job(`p${staying.pid}`)) && (await rig.job(`p${leaving.pid}`)));
  const before = (await scrape()).samples;
  const pid = String(leaving.pid);
  assert.equal(seriesOf(before, 'gpushare_process_memory_used_bytes', { pid }).length, 1);
  assert.equal(seriesOf(before, 'gpushare_job_memory_used_bytes', { job_id: `p${pid}` }).length, 1);
  const leavingUser = rig.engine.sampler.latest!.processes.find((p) => p.pid === leaving.pid)!.user!;

  const exited = new Promise((resolve) => leaving.once('exit', resolve));
  leaving.kill('SIGKILL');
  await exited;
  await rig.until('the process gone from the snapshot and the jobs', async () => !rig.engine.sampler.latest!.processes.some((p) => p.pid === leaving.pid) && !(await rig.job(`p${pid}`)));
  const after = (await scrape()).samples;
  assert.deepEqual(after.filter((s) => s.labels.pid === pid || s.labels.job_id === `p${pid}`), [], 'no series names the departed pid or its job');
  assert.equal(seriesOf(after, 'gpushare_process_memory_used_bytes', { pid: String(staying.pid) }).length, 1, 'the other process stays');
  if (asRoot) assert.deepEqual(seriesOf(after, 'gpushare_user_memory_used_bytes', { user: leavingUser }), [], `${leavingUser} has no GPU process left`);
});

test('suspensions and alerts are counted by reason and kind; jobs are counted per state', async (t) => {
  const { rig, scrape } = await endpoint('counters');
  const held = await holder(t, 0, 64 * MiB);
  const id = `p${held.pid}`;
  await rig.until('the holder as a job', () => rig.job(id));
  const counter = (samples: Sample[], name: string, labels: Record<string, string> = {}) => seriesOf(samples, name, labels).map((s) => s.value);
  const before = (await scrape()).samples;
  assert.deepEqual(counter(before, 'gpushare_suspensions_total', { reason: 'user' }), [0]);
  assert.deepEqual(counter(before, 'gpushare_alerts_total', { kind: 'gpu-lost' }), []);

  await rig.engine.call('jobs.suspend', { job: id });
  rig.engine.raiseAlert({ kind: 'gpu-lost', severity: 'error', gpu: 0, jobId: null, message: 'a test alert: not a real GPU' });
  await rig.until('the holder suspended', async () => (await rig.job(id))?.state === 'suspended');
  const after = (await scrape()).samples;
  assert.deepEqual(counter(after, 'gpushare_suspensions_total', { reason: 'user' }), [1]);
  assert.deepEqual(counter(after, 'gpushare_suspensions_total', { reason: 'priority' }), [0]);
  assert.deepEqual(counter(after, 'gpushare_alerts_total', { kind: 'gpu-lost' }), [1]);
  assert.equal(seriesOf(after, 'gpushare_process_memory_used_bytes', { pid: String(held.pid) })[0].labels.state, 'suspended');
  const jobs = await rig.engine.call('jobs.list', { includeFinished: true });
  assert.deepEqual(counter(after, 'gpushare_jobs', { state: 'suspended' }), [jobs.filter((j) => j.state === 'suspended').length]);
  await rig.engine.call('jobs.resume', { job: id }); // never leave it stopped
});

test('OpenMetrics for a scraper that asks for it, the text format otherwise; /metrics only, GET only', async () => {
  const { metrics, scrape } = await endpoint('http');
  const plain = await scrape();
  assert.match(plain.contentType, /^text\/plain; version=0\.0\.4/);
  assert.ok(!plain.text.includes('# EOF'));
  const open = await scrape('application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5');
  assert.match(open.contentType, /^application\/openmetrics-text; version=1\.0\.0/);
  assert.ok(open.text.endsWith('# EOF\n'));
  assert.ok(open.text.includes('# TYPE gpushare_parks counter\n') && open.text.includes('\ngpushare_parks_total 0\n'), 'an OpenMetrics counter family drops _total, its sample keeps it');
  assert.equal((await fetch(metrics.url.replace('/metrics', '/'))).status, 404);
  assert.equal((await fetch(metrics.url, { method: 'POST' })).status, 405);
});

test('promtool check metrics passes on the endpoint\'s output', async (t) => {
  if (spawnSync('promtool', ['--version']).error) return t.skip('promtool is not installed (Debian package prometheus)');
  const { rig, scrape } = await endpoint('promtool');
  const held = await holder(t, 0, 10 * MiB);
  await rig.until('the holder as a job', () => rig.job(`p${held.pid}`));
  const { text, samples } = await scrape();
  assert.ok(seriesOf(samples, 'gpushare_process_memory_used_bytes').length > 0, 'checked with per-process series in it');
  const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(check.status, 0, `promtool: ${check.stdout}${check.stderr}`);
  assert.equal(`${check.stdout}${check.stderr}`.trim(), '', 'no lint findings either');
});

test('every metric the Grafana dashboard queries is in the endpoint\'s output, and every panel reads the dashboard\'s Prometheus variable', async () => {
  const dashboard = JSON.parse(readFileSync(join(packageRoot(), 'assets', 'grafana', 'gpushare.json'), 'utf8')) as GrafanaDashboard;
  const { text } = await (await endpoint('dashboard')).scrape();
  const families = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
  const queries = [
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((target) => target.expr)),
    ...dashboard.templating.list.map((v) => (typeof v.query === 'string' ? v.query : (v.query?.query ?? ''))),
  ];
  const named = new Set(queries.flatMap((q) => q.match(/\bgpushare_[a-z0-9_]+/g) ?? []));
  assert.ok(named.size >= 20, `the dashboard names ${named.size} metrics`);
  assert.deepEqual([...named].filter((name) => !families.has(name)), [], 'metrics the dashboard queries that the endpoint does not have');
  assert.ok(dashboard.templating.list.some((v) => v.name === 'datasource' && v.type === 'datasource' && v.query === 'prometheus'));
  const panels = dashboard.panels.filter((p) => p.type !== 'row');
  assert.deepEqual(panels.filter((p) => p.datasource?.uid !== '${datasource}').map((p) => p.title), [], 'panels not on the Prometheus variable');
});

interface GrafanaDashboard {
  panels: Array<{ type: string; title: string; datasource?: { uid?: string }; targets?: Array<{ expr: string }> }>;
  templating: { list: Array<{ name: string; type: string; query?: string | { query?: string } }> };
}
