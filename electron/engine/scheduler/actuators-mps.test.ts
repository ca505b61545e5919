// The actuators for a job sharing a MIG slice through MPS, with a recording MpsControl: the slice's daemon
// is started before the job and the job gets the slice's client environment; a slice that is gone is a
// clear failure; terminate_client goes to the slice's daemon before any signal; the daemon is stopped
// only when its last job leaves.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { ProcessCheckpointer } from '../holds/checkpointer.js';
import type { Freezer } from '../holds/freezer.js';
import type { ProcessControl } from '../holds/process-control.js';
import type { MpsControl, SliceRef } from '../mps/mps-control.js';
import { MpsDaemons } from '../mps/mps-daemons.js';
import { JobActuators } from './actuators.js';
import { newJobView, type JobRecord } from './job-table.js';

const scratch = mkdtempSync(join(tmpdir(), 'gpushare-actuators-mps-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const SLICE = 'MIG-75a4fe7e-671e-4aa2-bfd6-8de30c290b68';
type GpuView = Snapshot['gpus'][number];
const gpuWith = (slices: Array<{ uuid: string; gpuInstanceId: number }>) => ({ index: 1, uuid: 'GPU-1', migSlices: slices }) as unknown as GpuView;

function rig(gpuView?: GpuView) {
  const calls: string[] = [];
  const sliceEnv = (s: SliceRef) => ({ CUDA_MPS_PIPE_DIRECTORY: `/run/mps/gpu${s.gpu}-gi${s.gpuInstanceId}/pipe`, CUDA_MPS_LOG_DIRECTORY: `/run/mps/gpu${s.gpu}-gi${s.gpuInstanceId}/log` });
  const running = new Set<string>(); // the slice daemons started and not stopped
  const at = (s: SliceRef) => `${s.gpu}/${s.gpuInstanceId}`;
  const mps = {
    kind: 'simulated',
    sliceStatus: (slices: SliceRef[]) => slices.map((s) => ({ gpu: s.gpu, gpuInstanceId: s.gpuInstanceId, uuid: s.uuid, state: running.has(at(s)) ? 'ours' : 'off' })),
    startSlice: (s: SliceRef) => void (calls.push(`startSlice ${at(s)}/${s.uuid}`), running.add(at(s))),
    stopSlice: (s: SliceRef) => (calls.push(`stopSlice ${at(s)}`), running.delete(at(s)), { gpu: s.gpu, state: 'off' }),
    sliceClientEnv: sliceEnv,
    terminateSliceClient: (s: SliceRef, pid: number) => calls.push(`terminate_client ${s.gpuInstanceId} ${pid}`) > 0,
    start: () => calls.push('start (whole GPU)'),
  } as unknown as MpsControl;
  const control = { terminate: (pid: number) => void calls.push(`signal ${pid}`), renice: () => undefined } as unknown as ProcessControl;
  const freezer = { forget: () => undefined } as unknown as Freezer;
  const act = new JobActuators({ control, freezer, gate: null, checkpointer: {} as ProcessCheckpointer, mps: new MpsDaemons({ control: mps, runtimeDir: scratch }), gpuView: () => gpuView });
  return { act, calls, running };
}

function record(id: string, share: number | null): JobRecord {
  const view = newJobView({ id, managed: true, owner: 'tester', uid: 0, argv: ['env'], cwd: scratch, gpu: 1, mode: 'mig', migSlice: SLICE, mpsSharePercent: share, memoryQuotaBytes: 2 ** 31, logPath: join(scratch, `${id}.log`) }, 'queued', 'submitted');
  return { view, slot: null, child: null, startTicks: null, holds: new Set(), executable: '/usr/bin/env', launchEnv: { PATH: '/usr/bin:/bin' }, runAs: null } as unknown as JobRecord;
}

async function exited(r: JobRecord, child: ReturnType<JobActuators['launch']>): Promise<string> {
  child.ref(); // launch unrefs it: the engine never waits for a job, this test does
  await new Promise((done) => child.once('exit', done));
  return readFileSync(r.view.logPath!, 'utf8');
}

test("a slice client: the slice's daemon is started first and the job runs with the slice's client environment", async () => {
  const { act, calls } = rig();
  const r = record('j1', 40);
  const log = await exited(r, act.launch(r, [{ index: 1, view: gpuWith([{ uuid: SLICE, gpuInstanceId: 2 }]) }]));
  assert.deepEqual(calls, [`startSlice 1/2/${SLICE}`], 'its own slice daemon, not the GPU one');
  const env = new Map(log.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  assert.equal(env.get('CUDA_VISIBLE_DEVICES'), SLICE);
  assert.equal(env.get('CUDA_MPS_PIPE_DIRECTORY'), '/run/mps/gpu1-gi2/pipe');
  assert.equal(env.get('CUDA_MPS_ACTIVE_THREAD_PERCENTAGE'), '40');
  assert.equal(env.get('CUDA_MPS_PINNED_DEVICE_MEM_LIMIT'), '0=2G');
});

test("a slice client's MPS priority follows its job's: best-effort below normal (1), normal at normal (0)", async () => {
  const { act } = rig();
  const gpu = gpuWith([{ uuid: SLICE, gpuInstanceId: 2 }]);
  const seen: Record<string, string | undefined> = {};
  for (const priority of ['best-effort', 'normal'] as const) {
    const r = record(`p-${priority}`, 40);
    r.view.priority = priority;
    const log = await exited(r, act.launch(r, [{ index: 1, view: gpu }]));
    seen[priority] = /^CUDA_MPS_CLIENT_PRIORITY=(.*)$/m.exec(log)?.[1];
  }
  assert.deepEqual(seen, { 'best-effort': '1', normal: '0' });
});

test('a MIG job without a share starts no daemon; a slice that is gone is a clear failure, with no daemon started', async () => {
  const { act, calls } = rig();
  const plain = record('j2', null);
  const log = await exited(plain, act.launch(plain, [{ index: 1, view: gpuWith([{ uuid: SLICE, gpuInstanceId: 2 }]) }]));
  assert.doesNotMatch(log, /CUDA_MPS_/);
  assert.throws(() => act.launch(record('j3', 40), [{ index: 1, view: gpuWith([]) }]), new RegExp(`MIG slice ${SLICE} is not on GPU 1 any more, so its MPS daemon cannot serve j3`));
  assert.deepEqual(calls, []);
});

test("terminate_client goes to the slice's daemon before any signal; the daemon stops only when its last job leaves", async () => {
  const { act, calls } = rig();
  const [a, b] = [record('j4', 50), record('j5', 50)];
  const gpu = gpuWith([{ uuid: SLICE, gpuInstanceId: 2 }]);
  await exited(a, act.launch(a, [{ index: 1, view: gpu }]));
  await exited(b, act.launch(b, [{ index: 1, view: gpu }]));
  assert.deepEqual(calls, [`startSlice 1/2/${SLICE}`], 'started for the first job; the second is a client of the running daemon');
  a.view.pid = 4242;
  act.terminate(a);
  assert.deepEqual(calls.slice(1), ['terminate_client 2 4242', 'signal 4242']);
  act.leaveMps(a, 1);
  assert.deepEqual(calls.slice(3), [], 'another job still shares the slice');
  act.leaveMps(b, 0);
  assert.deepEqual(calls.slice(3), ['stopSlice 1/2']);
});

test("a slice client of an earlier engine (adopted, not launched here) also gets terminate_client from its slice's daemon first", () => {
  const { act, calls, running } = rig(gpuWith([{ uuid: SLICE, gpuInstanceId: 2 }]));
  running.add('1/2'); // the earlier engine's slice daemon runs on
  const adopted = record('j6', 50);
  Object.assign(adopted.view, { state: 'running', pid: 4343 });
  act.terminate(adopted);
  assert.deepEqual(calls, ['terminate_client 2 4343', 'signal 4343']);
  act.leaveMps(adopted, 0);
  assert.deepEqual(calls.slice(2), ['stopSlice 1/2']);
});
