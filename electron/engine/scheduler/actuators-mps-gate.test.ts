// What the launch gate is told of a job that starts as an MPS client: its daemon and the client priority it starts
// with, read from the very environment it is launched with; a slot the gate refuses leaves no daemon started.
// A recording gate and MpsControl: nothing runs on a GPU.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { ProcessCheckpointer } from '../control/checkpointer.js';
import type { Freezer } from '../control/freezer.js';
import type { ProcessControl } from '../control/process-control.js';
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

test('the gate slot of an MPS client names its daemon and the client priority in its environment; a job in its own context is none', async () => {
  const { act, requests } = rig();
  const cases = [record('j1', 'mps', 'best-effort'), record('j2', 'mps', 'high'), record('j3', 'mig', 'best-effort'), record('j4', 'shared', 'best-effort')];
  const inEnv: Array<number | null> = [];
  for (const r of cases) inEnv.push(await clientPriorityIn(r, act.launch(r, 1, GPU)));
  assert.deepEqual(inEnv, [1, 0, 1, null]);
  assert.deepEqual(
    requests.map((q) => q.mpsClient ?? null),
    [{ daemon: 'gpu 1', priority: 1 }, { daemon: 'gpu 1', priority: 0 }, { daemon: `slice ${SLICE}`, priority: 1 }, null],
  );
  assert.equal(act.mpsPutsAhead(cases[1], cases[0]), true, 'the high client is ahead of the best-effort client of its daemon');
  assert.equal(act.mpsPutsAhead(cases[1], cases[2]), false, 'not of a client of another daemon');
  assert.equal(act.mpsPutsAhead(cases[1], cases[3]), false, 'nor of a job in its own context');
  act.releaseSlot(cases[0]);
  assert.equal(act.mpsPutsAhead(cases[1], cases[0]), false, 'a job that ended is nobody\'s client');
});

test('a job a restarted engine adopts gets back the client priority its slot says it started with, not its priority now', () => {
  const adopted: Array<{ slot: number; mpsDaemon?: string | null }> = [];
  const started = new Map([[2, 0], [3, 0], [4, 1], [5, null]]); // slot → client priority the earlier engine wrote (null: none)
  const gate = {
    adoptSlot: (slot: number, job: { mpsDaemon?: string | null }) => (adopted.push({ slot, mpsDaemon: job.mpsDaemon }), true),
    readSlot: (slot: number) => ({ mpsClientPriority: started.get(slot) ?? null }),
  } as unknown as JobGate;
  const act = new JobActuators({ control: {} as ProcessControl, freezer: {} as Freezer, gate, checkpointer: {} as ProcessCheckpointer, mps: null });
  const live = (id: string, mode: 'mps' | 'shared', priority: JobRecord['view']['priority']): JobRecord => {
    const r = record(id, mode, priority);
    r.view.pid = 4242;
    return r;
  };
  const high = live('j1', 'mps', 'high');
  const movedDown = live('j2', 'mps', 'best-effort'); // started normal (client priority 0), moved to best-effort before the restart
  const be = live('j3', 'mps', 'best-effort');
  const own = live('j4', 'shared', 'best-effort');
  assert.deepEqual([act.adoptSlot(high, 2), act.adoptSlot(movedDown, 3), act.adoptSlot(be, 4), act.adoptSlot(own, 5)], [true, true, true, true]);
  assert.deepEqual(adopted.map((a) => a.mpsDaemon ?? null), ['gpu 1', 'gpu 1', 'gpu 1', null], 'the gate hears each job\'s daemon');
  assert.equal(act.mpsPutsAhead(high, be), true, 'the best-effort client started below normal');
  assert.equal(act.mpsPutsAhead(high, movedDown), false, 'the moved one still runs at normal client priority');
  assert.equal(act.mpsPutsAhead(high, own), false);
});

test('a job whose gate slot is refused starts no MPS daemon', () => {
  const { act, started } = rig(true);
  assert.throws(() => act.launch(record('j1', 'mps', 'best-effort'), 1, GPU), /slots are in use/);
  assert.deepEqual(started, []);
});
