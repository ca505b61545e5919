// Who decides a daemon's life, against a scripted MpsControl (what it was asked, in order): a stop the
// daemon has not finished (a real control daemon exits after `quit` returns) holds the next start back
// until it is gone; a person's daemon, one started outside the engine, one with clients left and another
// user's are never stopped; why a daemon runs outlives the engine and goes with the daemon.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { MpsGpuStatus, MpsState } from '../../../shared/spatial.js';
import type { GpuRef, MpsControl, SliceRef } from './mps-control.js';
import { MpsDaemons } from './mps-daemons.js';
import { mpsControlStandIn } from '../testing/mps-control-stand-in.js';
import { RealMpsControl } from './real-mps-control.js';

const scratch = mkdtempSync(join(tmpdir(), 'gpushare-mps-daemons-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const GPU0: GpuRef = { index: 0, uuid: 'GPU-0' };
const SLICE: SliceRef = { gpu: 1, gpuInstanceId: 2, uuid: 'MIG-2' };

/** Daemons by name ("gpu0", "gpu1-gi2"): 'quitting' is asked to stop and still running (status: ours). */
function scripted(runtimeDir: string) {
  const calls: string[] = [];
  const daemons = new Map<string, MpsState | 'quitting'>();
  let quitAtOnce = true;
  const view = (name: string, gpu: number): MpsGpuStatus => {
    const now = daemons.get(name) ?? 'off';
    const state = now === 'quitting' ? 'ours' : now;
    return { gpu, state, user: state === 'off' ? null : state === 'ours' ? 'me' : 'alice', controlPid: null, serverPids: [], pipeDir: null, message: `${name} ${now}` };
  };
  const stop = (name: string, gpu: number) => {
    calls.push(`stop ${name}`);
    daemons.set(name, quitAtOnce ? 'off' : 'quitting');
    return view(name, gpu);
  };
  const control = {
    kind: 'simulated',
    status: (gpus: GpuRef[]) => gpus.map((g) => view(`gpu${g.index}`, g.index)),
    sliceStatus: (slices: SliceRef[]) => slices.map((s) => ({ ...view(`gpu${s.gpu}-gi${s.gpuInstanceId}`, s.gpu), gpuInstanceId: s.gpuInstanceId, uuid: s.uuid, daemonRunning: false })),
    start: (g: GpuRef) => {
      if (daemons.get(`gpu${g.index}`) !== 'ours') calls.push(`start gpu${g.index}`); // as both controls: a running daemon of ours is kept
      daemons.set(`gpu${g.index}`, 'ours');
      return view(`gpu${g.index}`, g.index);
    },
    startSlice: (s: SliceRef) => (calls.push(`start gpu${s.gpu}-gi${s.gpuInstanceId}`), daemons.set(`gpu${s.gpu}-gi${s.gpuInstanceId}`, 'ours')),
    stop: (g: GpuRef) => stop(`gpu${g.index}`, g.index),
    stopSlice: (s: SliceRef) => stop(`gpu${s.gpu}-gi${s.gpuInstanceId}`, s.gpu),
  } as unknown as MpsControl;
  return {
    mps: new MpsDaemons({ control, runtimeDir }),
    calls,
    daemons,
    slowQuit: () => (quitAtOnce = false),
  };
}

test('a stop the daemon has not finished holds the next start back until the old daemon is gone', () => {
  const { mps, calls, daemons, slowQuit } = scripted(join(scratch, 'slow'));
  slowQuit();
  mps.startForJob({ gpu: GPU0 });
  assert.equal(mps.leave({ gpu: GPU0 }, 0), true, 'the last client of a daemon started for jobs stops it');
  assert.deepEqual(calls, ['start gpu0', 'stop gpu0']);
  assert.match(mps.stoppingBlock({ gpu: GPU0 }) ?? '', /^the MPS daemon for GPU 0 is still stopping \(asked \d+ s ago\); a new client waits until it is gone$/);
  assert.throws(() => mps.startForJob({ gpu: GPU0 }), /^Error: Cannot start MPS on GPU 0 yet: the MPS daemon for GPU 0 is still stopping/);
  assert.throws(() => mps.startOnRequest(GPU0), /Cannot start MPS on GPU 0 yet/);
  assert.equal(mps.leave({ gpu: GPU0 }, 0), false, 'asked once is enough');
  assert.deepEqual(calls, ['start gpu0', 'stop gpu0'], 'no start on the dying daemon, no second quit');
  const dying = mps.status([GPU0])[0];
  assert.equal(dying.message, 'The MPS daemon for GPU 0 is stopping: quit was sent, and no job becomes its client until it is gone.');
  assert.equal(dying.startedFor, undefined, 'it runs for nobody any more');

  daemons.set('gpu0', 'off'); // the old daemon exited
  assert.equal(mps.stoppingBlock({ gpu: GPU0 }), null);
  mps.startForJob({ gpu: GPU0 });
  assert.deepEqual(calls, ['start gpu0', 'stop gpu0', 'start gpu0'], 'a fresh daemon, started after the old one was gone');
  assert.equal(mps.status([GPU0])[0].startedFor, 'jobs');
});

test("never stopped: another user's daemon, one with clients left, a person's, and a GPU daemon started outside the engine", () => {
  const dir = join(scratch, 'kept');
  const { mps, calls, daemons } = scripted(dir);
  daemons.set('gpu0', 'held');
  assert.equal(mps.leave({ gpu: GPU0 }, 0), false);
  assert.equal(mps.status([GPU0])[0].startedFor, undefined, 'not ours: no reason of ours');

  daemons.clear();
  mps.startForJob({ gpu: GPU0 });
  assert.equal(mps.leave({ gpu: GPU0 }, 1), false, 'another client still uses it');
  assert.equal(mps.startOnRequest(GPU0).startedFor, 'request', 'a person asked for the running daemon');
  assert.equal(mps.leave({ gpu: GPU0 }, 0), false, "a person's daemon stays after the last job");

  const outside = { index: 3, uuid: 'GPU-3' };
  daemons.set('gpu3', 'ours'); // ours by user, with no record of why: an earlier engine's, or started by hand
  assert.equal(mps.status([outside])[0].startedFor, 'request');
  assert.equal(mps.leave({ gpu: outside }, 0), false);
  assert.deepEqual(calls, ['start gpu0'], 'nothing was stopped');

  daemons.set('gpu1-gi2', 'ours'); // a slice daemon only ever starts for jobs
  assert.equal(mps.leave({ slice: SLICE }, 0), true);
  assert.deepEqual(calls.slice(1), ['stop gpu1-gi2']);
});

test('why a daemon runs outlives the engine, goes with the daemon, and a stale reason is replaced', () => {
  const dir = join(scratch, 'restart');
  const first = scripted(dir);
  first.mps.startForJob({ gpu: GPU0 });
  const record = join(dir, 'mps', 'gpu0', 'started-for.json');
  assert.ok(existsSync(record), 'kept beside its pipe and log directories');

  const restarted = new MpsDaemons({ control: first.mps.control, runtimeDir: dir });
  assert.equal(restarted.status([GPU0])[0].startedFor, 'jobs', 'a new engine reads why it runs');
  assert.equal(restarted.leave({ gpu: GPU0 }, 0), true);
  assert.equal(existsSync(record), false, 'stopped: the reason went with it');

  mkdirSync(join(dir, 'mps', 'gpu0'), { recursive: true });
  writeFileSync(record, JSON.stringify({ startedFor: 'request', at: '2026-01-01T00:00:00Z' })); // a person's daemon that died since
  restarted.startForJob({ gpu: GPU0 });
  assert.equal(restarted.status([GPU0])[0].startedFor, 'jobs', 'the daemon a job started is the jobs\'');
  writeFileSync(record, 'not json');
  assert.equal(restarted.status([GPU0])[0].startedFor, 'request', 'an unreadable reason keeps the daemon');
});

test('a new engine releases only a daemon recorded as started for jobs, and only with no client left', () => {
  const dir = join(scratch, 'release');
  const { mps, calls, daemons } = scripted(dir);
  assert.equal(mps.anyStartedForJobs(), false, 'nothing started here yet');
  daemons.set('gpu0', 'ours');
  daemons.set('gpu1-gi2', 'ours'); // no record: started outside this engine's runtime dir
  assert.equal(mps.releaseIfUnused({ gpu: GPU0 }, 0), false);
  assert.equal(mps.releaseIfUnused({ slice: SLICE }, 0), false, 'a slice daemon of unknown origin is left alone too');

  const gpu2 = { index: 2, uuid: 'GPU-2' };
  mps.startForJob({ gpu: gpu2 });
  assert.equal(mps.anyStartedForJobs(), true);
  assert.equal(mps.releaseIfUnused({ gpu: gpu2 }, 1), false, 'a client still uses it');
  assert.equal(mps.releaseIfUnused({ gpu: gpu2 }, 0), true);
  assert.deepEqual(calls, ['start gpu2', 'stop gpu2']);
  assert.equal(mps.anyStartedForJobs(), false, 'its record went with it');
});

test('with the real backend: a control daemon still in /proc after quit returned gets no new client and no second daemon until it has exited', () => {
  const dir = join(scratch, 'real');
  // quit returns before the daemon has exited, as a real control daemon's can (the test takes it out of /proc when it "exits")
  const standIn = mpsControlStandIn(dir, { quitLeavesDaemon: true });
  const proc = standIn.proc;
  const program = standIn.program;
  const me = { uid: userInfo().uid, user: userInfo().username };
  const control = new RealMpsControl({ runtimeDir: join(dir, 'run'), identity: me, procRoot: proc, controlProgram: program, userName: () => me.user });
  const mps = new MpsDaemons({ control, runtimeDir: join(dir, 'run') });
  const commands = () => standIn.commands().map((line) => line.split(' ')[0]);

  mps.startForJob({ gpu: GPU0 });
  assert.equal(mps.status([GPU0])[0].startedFor, 'jobs');
  assert.equal(mps.leave({ gpu: GPU0 }, 0), true);
  assert.deepEqual(commands(), ['-d', 'quit']);
  assert.equal(control.status([GPU0])[0].state, 'ours', 'quit returned, the daemon has not exited yet');
  assert.match(mps.stoppingBlock({ gpu: GPU0 }) ?? '', /still stopping/);
  assert.throws(() => mps.startForJob({ gpu: GPU0 }), /Cannot start MPS on GPU 0 yet/);
  assert.deepEqual(commands(), ['-d', 'quit'], 'the next job was not made a client of the exiting daemon');

  rmSync(join(proc, '4242'), { recursive: true }); // it exits
  mps.startForJob({ gpu: GPU0 });
  assert.deepEqual(commands(), ['-d', 'quit', '-d'], 'a fresh daemon once the old one is gone');
  assert.equal(mps.status([GPU0])[0].startedFor, 'jobs');
});
