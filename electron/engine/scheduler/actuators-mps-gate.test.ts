// A job that starts as an MPS client: the client priority in its environment, what the launch gate is told of it
// (what it is told of any job: the gate orders MPS clients as it orders jobs in their own contexts), and that a
// slot the gate refuses leaves no daemon started.
// A recording gate and MpsControl: nothing runs on a GPU.
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
import type { GateSlot, GateSlotRequest, JobGate } from './job-gate.js';
import { newJobView, type JobRecord } from './job-table.js';

const scratch = mkdtempSync(join(tmpdir(), 'gpushare-actuators-mps-gate-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const SLICE = 'MIG-75a4fe7e-671e-4aa2-bfd6-8de30c290b68';
type GpuView = Snapshot['gpus'][number];
const GPU = { index: 1, uuid: 'GPU-1', migSlices: [{ uuid: SLICE, gpuInstanceId: 2 }] } as unknown as GpuView;

function rig(refuse = false) {
  const started: string[] = [];
  const requests: GateSlotRequest[] = [];
  const daemonEnv = (where: string) => ({ CUDA_MPS_PIPE_DIRECTORY: `/run/mps/${where}/pipe`, CUDA_MPS_LOG_DIRECTORY: `/run/mps/${where}/log` });
  const mps = {
    kind: 'simulated',
    status: (gpus: Array<{ index: number }>) => gpus.map((g) => ({ gpu: g.index, state: started.includes(`gpu ${g.index}`) ? 'ours' : 'off' })),
    sliceStatus: (slices: SliceRef[]) => slices.map((s) => ({ gpu: s.gpu, gpuInstanceId: s.gpuInstanceId, uuid: s.uuid, state: started.includes(`slice ${s.uuid}`) ? 'ours' : 'off' })),
    start: (g: { index: number }) => void started.push(`gpu ${g.index}`),
    startSlice: (s: SliceRef) => void started.push(`slice ${s.uuid}`),
    clientEnv: (gpu: number) => daemonEnv(`gpu${gpu}`),
    sliceClientEnv: (s: SliceRef) => daemonEnv(`gpu${s.gpu}-gi${s.gpuInstanceId}`),
  } as unknown as MpsControl;
  const gate = {
    allocateSlot(request: GateSlotRequest): GateSlot {
      requests.push(request);
      if (refuse) throw new Error('All 64 launch-gate slots are in use');
      return { slot: requests.length - 1, env: {} };
    },
    releaseSlot: () => undefined,
  } as unknown as JobGate;
  const control = { terminate: () => undefined, renice: () => undefined } as unknown as ProcessControl;
  const act = new JobActuators({ control, freezer: {} as Freezer, gate, checkpointer: {} as ProcessCheckpointer, mps: new MpsDaemons({ control: mps, runtimeDir: scratch }), gpuView: () => GPU });
  return { act, started, requests };
}

function record(id: string, mode: 'mps' | 'mig' | 'shared', priority: JobRecord['view']['priority']): JobRecord {
  const share = mode === 'shared' ? null : 100;
  const view = newJobView({ id, managed: true, owner: 'tester', uid: 0, argv: ['env'], cwd: scratch, gpu: 1, mode, migSlice: mode === 'mig' ? SLICE : null, mpsSharePercent: share, memoryQuotaBytes: null, logPath: join(scratch, `${id}.log`) }, 'queued', 'submitted');
  view.priority = priority;
  return { view, slot: null, child: null, startTicks: null, holds: new Set(), executable: '/usr/bin/env', launchEnv: { PATH: '/usr/bin:/bin' }, runAs: null } as unknown as JobRecord;
}

async function clientPriorityIn(r: JobRecord, child: ReturnType<JobActuators['launch']>): Promise<number | null> {
  child.ref();
  await new Promise((done) => child.once('exit', done));
  const seen = /^CUDA_MPS_CLIENT_PRIORITY=(.*)$/m.exec(readFileSync(r.view.logPath!, 'utf8'))?.[1];
  return seen === undefined ? null : Number(seen);
}

test('an MPS client starts with the client priority of its job priority, and its gate slot is asked for as any job\'s: the gate orders it as a job in its own context', async () => {
  const { act, requests } = rig();
  const cases = [record('j1', 'mps', 'best-effort'), record('j2', 'mps', 'high'), record('j3', 'mig', 'best-effort'), record('j4', 'shared', 'best-effort')];
  const inEnv: Array<number | null> = [];
  for (const r of cases) inEnv.push(await clientPriorityIn(r, act.launch(r, [{ index: 1, view: GPU }])));
  assert.deepEqual(inEnv, [1, 0, 1, null]);
  const asked = (jobId: string, priority: string, migSlice: string | null) => ({ jobId, gpu: 1, migSlice, priority, quotaBytes: null, owner: null });
  assert.deepEqual(requests, [asked('j1', 'best-effort', null), asked('j2', 'high', null), asked('j3', 'best-effort', SLICE), asked('j4', 'best-effort', null)]);
});

test('a job whose gate slot is refused starts no MPS daemon', () => {
  const { act, started } = rig(true);
  assert.throws(() => act.launch(record('j1', 'mps', 'best-effort'), [{ index: 1, view: GPU }]), /slots are in use/);
  assert.deepEqual(started, []);
});
