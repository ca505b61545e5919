// The metrics rendered from a hand-built snapshot (not a driver's: made up here to reach cases the
// simulated driver does not produce, such as containers and odd command names).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import type { GpuProcessView, GpuView, Snapshot } from '../../../shared/snapshot.js';
import { GpushareMetrics, type MetricsSources } from './gpushare-metrics.js';
import { parseExposition, seriesOf } from './testing/exposition.js';

const gpu = (index: number, over: Partial<GpuView> = {}): GpuView => ({
  index, uuid: `GPU-made-up-${index}`, name: 'Made-up GPU', pciBusId: `0000:0${index}:00.0`, lost: false, memoryTotal: 1000, memoryUsed: 300, memoryFree: 700,
  utilizationGpu: 50, utilizationMemory: 10, temperatureC: 40, powerWatts: 100, powerLimitWatts: 300, smClockMHz: null, memClockMHz: null, smCount: null,
  computeMode: null, migEnabled: false, migPending: false, migSlices: [], errors: [], ...over,
});
const proc = (pid: number, over: Partial<GpuProcessView> = {}): GpuProcessView => ({
  pid, gpuIndex: 0, gpuUuid: 'GPU-made-up-0', kind: 'compute', user: 'alice', uid: 1000, command: 'python3', argv: ['python3', 'train.py', '--secret-token=abc'],
  startedAt: 1, usedMemory: 100, smPercent: 25, memPercent: null, gpuInstanceId: null, computeInstanceId: null, context: null, ...over,
});
const snapshotOf = (gpus: GpuView[], processes: GpuProcessView[]): Snapshot => ({
  seq: 1, takenAt: 1_700_000_000_000, intervalMs: 1000, nominalIntervalMs: 1000, processes, gpus,
  driver: { driverVersion: '550.00', nvmlVersion: '12', cudaDriverVersion: null, simulated: false, scenario: null },
});
const sources = (snapshot: Snapshot | null, jobs: JobView[] = []): MetricsSources => ({
  kind: 'personal', box: 'box7', latest: () => snapshot, jobs: () => jobs, jobOf: () => null, counters: null, alerts: new Map(),
});
const render = async (s: MetricsSources) => parseExposition(await new GpushareMetrics(s).render());

test('the container label is the name, else the id\'s first 12 characters; the command is its name, never its arguments', async () => {
  const container = (name: string | null) => ({ container: { runtime: 'docker' as const, id: '0123456789abcdef0123', name }, containerUser: null, systemdUnit: null, slurmJobId: null, jupyterKernel: null, sshSession: null });
  const samples = await render(sources(snapshotOf([gpu(0)], [proc(10, { context: container('trainer') }), proc(11, { context: container(null) }), proc(12)])));
  const label = (pid: number) => seriesOf(samples, 'gpushare_process_memory_used_bytes', { pid: String(pid) })[0].labels;
  assert.deepEqual([10, 11, 12].map((pid) => label(pid).container), ['trainer', '0123456789ab', '']);
  assert.equal(label(10).command, 'python3');
  assert.ok(samples.every((s) => !Object.values(s.labels).some((v) => v.includes('secret'))), 'no argument reaches a label');
});

test('a label value with quotes, a backslash or a newline is escaped and reads back as it was', async () => {
  const command = 'we"ird\\name\nx';
  const text = await new GpushareMetrics(sources(snapshotOf([gpu(0)], [proc(10, { command, user: null, uid: 4242 })]))).render();
  const [series] = seriesOf(parseExposition(text), 'gpushare_process_memory_used_bytes');
  assert.equal(series.labels.command, command);
  assert.equal(series.labels.user, '4242', 'a uid with no name is shown by number');
  assert.ok(text.includes('command="we\\"ird\\\\name\\nx"'));
});

test('what the driver could not tell is left out, not shown as 0; a percentage is a ratio', async () => {
  const mig = gpu(1, { utilizationGpu: null, temperatureC: null, migEnabled: true });
  const samples = await render(sources(snapshotOf([gpu(0), mig], [proc(10), proc(11, { gpuIndex: 1, smPercent: null, usedMemory: null })])));
  assert.deepEqual(seriesOf(samples, 'gpushare_gpu_utilization_ratio').map((s) => [s.labels.gpu, s.value]), [['0', 0.5]]);
  assert.deepEqual(seriesOf(samples, 'gpushare_gpu_temperature_celsius').map((s) => s.labels.gpu), ['0']);
  assert.deepEqual(seriesOf(samples, 'gpushare_process_sm_ratio').map((s) => [s.labels.pid, s.value]), [['10', 0.25]]);
  assert.deepEqual(seriesOf(samples, 'gpushare_process_memory_used_bytes').map((s) => s.labels.pid), ['10']);
  assert.deepEqual(seriesOf(samples, 'gpushare_user_processes').map((s) => s.value), [2], 'the process still counts');
});

test('a MIG slice\'s SM activity (GPM) is a ratio per slice; a slice without a reading has no series', async () => {
  const slice = (gpuInstanceId: number, smPercent: number | null) => ({ uuid: `MIG-${gpuInstanceId}`, name: 'MIG 3g.40gb', profileName: '3g.40gb', gpuInstanceId, computeInstanceId: 0, smCount: 60, placement: { start: 0, size: 4 }, memoryTotal: 40, memoryUsed: 1, smPercent });
  const samples = await render(sources(snapshotOf([gpu(1, { migEnabled: true, migSlices: [slice(1, 42), slice(2, null)] })], [])));
  assert.deepEqual(seriesOf(samples, 'gpushare_mig_slice_sm_ratio').map((s) => [s.labels.slice, s.labels.profile, s.value]), [['MIG-1', '3g.40gb', 0.42]]);
});

test('with no snapshot yet: the engine\'s info, zero counts per state, no GPU or process series', async () => {
  const samples = await render(sources(null));
  assert.equal(seriesOf(samples, 'gpushare_engine_info', { box: 'box7', kind: 'personal', driver_version: '' }).length, 1);
  assert.equal(seriesOf(samples, 'gpushare_jobs').length, 11);
  assert.ok(seriesOf(samples, 'gpushare_jobs').every((s) => s.value === 0));
  assert.deepEqual(samples.filter((s) => s.name.startsWith('gpushare_gpu_') || s.name.startsWith('gpushare_process_')), []);
});

test('a user\'s SM share of a GPU is the sum of their processes\' shares there; their memory counts every GPU', async () => {
  const samples = await render(sources(snapshotOf([gpu(0), gpu(1)], [proc(10), proc(11), proc(12, { gpuIndex: 1, smPercent: 80 }), proc(13, { user: 'bob', smPercent: 40 })])));
  const share = (user: string) => seriesOf(samples, 'gpushare_user_sm_share_ratio', { user }).map((s) => [s.labels.gpu, s.value]);
  assert.deepEqual(share('alice'), [['0', 0.5], ['1', 0.8]]);
  assert.deepEqual(share('bob'), [['0', 0.4]]);
  assert.deepEqual(seriesOf(samples, 'gpushare_user_memory_used_bytes').map((s) => [s.labels.user, s.value]), [['alice', 300], ['bob', 100]]);
});
