// The pure parts of MPS in MIG slices: each slice's own pipe and log directories, a slice client's
// environment, and the real backend's daemon for a slice (a stand-in nvidia-cuda-mps-control that records
// how it was started and what it was told; /proc is a directory this test writes).
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { mpsDirectories, mpsJobEnv, mpsSliceDirectories, mpsSliceJobEnv, type MpsControl, type SliceRef } from './mps-control.js';
import { mpsControlStandIn } from '../testing/mps-control-stand-in.js';
import { findMpsProcesses, RealMpsControl } from './real-mps-control.js';
import { ROOT_PATH } from '../root-env.js';

const scratch = mkdtempSync(join(tmpdir(), 'gpushare-mps-control-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const me = { uid: userInfo().uid, user: userInfo().username };
const slice: SliceRef = { gpu: 1, gpuInstanceId: 2, uuid: 'MIG-75a4fe7e-671e-4aa2-bfd6-8de30c290b68' };

test("each slice has its own pipe and log directories, apart from its GPU's and other slices'", () => {
  const run = '/run/user/1000/gpushare';
  const dirs = mpsSliceDirectories(run, slice);
  assert.deepEqual(dirs, { pipeDir: `${run}/mps/gpu1-gi2/pipe`, logDir: `${run}/mps/gpu1-gi2/log` });
  const others = [mpsDirectories(run, 1).pipeDir, mpsSliceDirectories(run, { gpu: 1, gpuInstanceId: 3 }).pipeDir, mpsSliceDirectories(run, { gpu: 0, gpuInstanceId: 2 }).pipeDir];
  assert.equal(new Set([dirs.pipeDir, ...others]).size, 4);
  // the daemon's control socket lives in the pipe directory: a Unix socket path has 108 bytes
  assert.ok(`${dirs.pipeDir}/control`.length < 108);
});

test("a slice client's environment: its slice, the slice daemon's pipe, its share of the slice's SMs, its quota as the pinned limit", () => {
  const control = { sliceClientEnv: (s: SliceRef) => ({ CUDA_MPS_PIPE_DIRECTORY: `/p/${s.gpuInstanceId}`, CUDA_MPS_LOG_DIRECTORY: `/l/${s.gpuInstanceId}` }) } as unknown as MpsControl;
  assert.deepEqual(mpsSliceJobEnv(control, slice, 25, 3 * 2 ** 30, 'normal'), {
    CUDA_MPS_PIPE_DIRECTORY: '/p/2',
    CUDA_MPS_LOG_DIRECTORY: '/l/2',
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: '25',
    CUDA_MPS_CLIENT_PRIORITY: '0',
    CUDA_MPS_PINNED_DEVICE_MEM_LIMIT: '0=3G', // device 0: the only one a slice client sees
    CUDA_VISIBLE_DEVICES: slice.uuid,
  });
  assert.equal(mpsSliceJobEnv(control, slice, 100, null, 'normal').CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, undefined);
  for (const bad of [0, 101, 12.5]) assert.throws(() => mpsSliceJobEnv(control, slice, bad, null, 'normal'), /The MPS share must be a whole percentage from 1 to 100, got /);
});

test('a best-effort MPS client runs at below-normal MPS priority (CUDA_MPS_CLIENT_PRIORITY=1), a high or normal one at normal (0), on a GPU or in a slice', () => {
  const control = { clientEnv: (gpu: number) => ({ CUDA_MPS_PIPE_DIRECTORY: `/p/gpu${gpu}` }), sliceClientEnv: () => ({ CUDA_MPS_PIPE_DIRECTORY: '/p/slice' }) } as unknown as MpsControl;
  const byPriority = (env: (p: 'high' | 'normal' | 'best-effort') => Record<string, string>) => (['high', 'normal', 'best-effort'] as const).map((p) => env(p).CUDA_MPS_CLIENT_PRIORITY);
  assert.deepEqual(byPriority((p) => mpsJobEnv(control, 0, 100, null, p)), ['0', '0', '1']);
  assert.deepEqual(byPriority((p) => mpsSliceJobEnv(control, slice, 50, null, p)), ['0', '0', '1']);
  assert.equal(mpsJobEnv(control, 0, 100, null, 'best-effort').CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, '100', 'the priority comes beside the share, not instead of it');
});

test("the real backend starts a slice's daemon with the slice's MIG UUID and pipe, sees it as ours there only, and quits it through that pipe", () => {
  const dir = join(scratch, 'real');
  const standIn = mpsControlStandIn(dir);
  const runtimeDir = join(dir, 'run');
  const mps = new RealMpsControl({ runtimeDir, identity: me, procRoot: standIn.proc, controlProgram: standIn.program, userName: () => me.user });
  const { pipeDir, logDir } = mpsSliceDirectories(runtimeDir, slice);
  const other: SliceRef = { gpu: 1, gpuInstanceId: 1, uuid: 'MIG-e22e5724-e8d6-4d06-81c6-db2ec0fe387f' };

  assert.deepEqual(mps.sliceStatus([slice]).map((s) => [s.state, s.daemonRunning]), [['off', false]]);
  const started = mps.startSlice(slice);
  assert.equal(standIn.started(), `CUDA_MPS_LOG_DIRECTORY=${logDir}\nCUDA_MPS_PIPE_DIRECTORY=${pipeDir}\nCUDA_VISIBLE_DEVICES=${slice.uuid}\n`);
  assert.deepEqual([started.state, started.controlPid, started.pipeDir, started.daemonRunning, started.uuid], ['ours', 4242, pipeDir, true, slice.uuid]);
  assert.match(started.message, /^MPS runs for GPU 1 slice GI 2 \(nvidia-cuda-mps-control pid 4242/);
  const [otherSlice] = mps.sliceStatus([other]);
  assert.deepEqual([otherSlice.state, otherSlice.daemonRunning], ['off', false], 'another slice has no daemon');
  const [gpu] = mps.status([{ index: 1, uuid: 'GPU-1' }]);
  assert.equal(gpu.state, 'off');
  assert.equal(gpu.message, 'No MPS daemon serves GPU 1.', "the slice's daemon is gpushare's own, not a stranger's on the GPU");
  assert.deepEqual(mps.sliceClientEnv(slice), { CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_LOG_DIRECTORY: logDir });

  const stopped = mps.stopSlice(slice);
  assert.deepEqual(standIn.commands(), ['-d', `quit via ${pipeDir}`]);
  assert.deepEqual([stopped.state, stopped.daemonRunning], ['off', false]);
});

test('as root, the real backend starts the MPS control daemon with PATH of system directories and its CUDA_* variables, none of the engine\'s own environment', { skip: process.getuid?.() === 0 ? false : 'needs root: a personal engine runs it with its user\'s own environment' }, (t) => {
  process.env.GPST_ENGINE_OWN = 'the engine\'s';
  t.after(() => delete process.env.GPST_ENGINE_OWN);
  const dir = join(scratch, 'clean');
  const standIn = mpsControlStandIn(dir);
  const mps = new RealMpsControl({ runtimeDir: join(dir, 'run'), identity: me, procRoot: standIn.proc, controlProgram: standIn.program, userName: () => me.user });
  mps.startSlice(slice);
  const env = standIn.environment();
  assert.equal(env.get('PATH'), ROOT_PATH);
  const ours = [...env.keys()].filter((name) => !['PWD', 'OLDPWD', 'SHLVL', '_'].includes(name)).sort(); // what its shell adds itself
  assert.deepEqual(ours, ['CUDA_MPS_LOG_DIRECTORY', 'CUDA_MPS_PIPE_DIRECTORY', 'CUDA_VISIBLE_DEVICES', 'PATH']);
  mps.stopSlice(slice);
});

test("finding the box's MPS daemons reads the start of each command line and only the two variables it needs, whatever the processes hold", () => {
  const proc = mkdtempSync(join(scratch, 'proc-'));
  const put = (pid: number, file: string, data: string) => {
    mkdirSync(join(proc, String(pid)), { recursive: true });
    writeFileSync(join(proc, String(pid), file), data);
  };
  const stat = (pid: number) => `${pid} (x) S 1 ${pid} ${pid} 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 100 1 1\n`;
  // mallory's processes: command lines and an environment of 6 MB each
  for (const pid of [200, 201, 202]) {
    put(pid, 'stat', stat(pid));
    put(pid, 'cmdline', `python3\0${'x'.repeat(6 * 1024 * 1024)}\0`);
  }
  put(300, 'stat', stat(300));
  put(300, 'cmdline', '/usr/bin/nvidia-cuda-mps-server\0');
  put(300, 'environ', [`PAD=${'y'.repeat(6 * 1024 * 1024)}`, 'CUDA_MPS_PIPE_DIRECTORY=/run/mps/gpu0/pipe', 'CUDA_VISIBLE_DEVICES=0', ''].join('\0'));
  const io = (): number => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
  const before = io();
  const found = findMpsProcesses(proc);
  const read = io() - before;
  assert.deepEqual(found.map((p) => [p.pid, p.role, p.pipeDir, p.visibleDevices]), [[300, 'server', '/run/mps/gpu0/pipe', '0']], 'a variable after megabytes of others is still found');
  assert.ok(read < 6.5 * 1024 * 1024, `read less than the 24 MB those files hold (one environment is scanned through), not ${read} bytes`);
});

/** Writes a /proc of these processes: each one's stat (its parent), argv[0], MPS pipe and owner. */
function fakeProc(processes: Array<[pid: number, ppid: number, uid: number, argv0: string, pipeDir: string]>): string {
  const proc = mkdtempSync(join(scratch, 'proc-owners-'));
  for (const [pid, ppid, uid, argv0, pipeDir] of processes) {
    const at = join(proc, String(pid));
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, 'stat'), `${pid} (x) S ${ppid} ${pid} ${pid} 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 100 1 1\n`);
    writeFileSync(join(at, 'cmdline'), `${argv0}\0`);
    writeFileSync(join(at, 'environ'), `CUDA_MPS_PIPE_DIRECTORY=${pipeDir}\0`);
    chownSync(at, uid, uid);
  }
  return proc;
}
const asRoot = { skip: process.getuid?.() === 0 ? false : 'needs root: the processes of another user are directories chown-ed to them' };
const alice = 4321;

test("only servers our own control daemons started are the engine's MPS servers: one a user names so, or a user's own daemon's, is not", asRoot, () => {
  const runtimeDir = join(scratch, 'owners-run');
  const ours = mpsDirectories(runtimeDir, 0).pipeDir;
  const proc = fakeProc([
    [10, 1, me.uid, '/usr/bin/nvidia-cuda-mps-control', ours], // the engine's daemon for GPU 0
    [11, 10, alice, '/usr/bin/nvidia-cuda-mps-server', ours], // its server, run as its first client's user
    [20, 1, alice, 'bash', '/tmp/nvidia-mps'],
    [21, 20, alice, 'nvidia-cuda-mps-server', ours], // `exec -a nvidia-cuda-mps-server python train.py`, our pipe copied
    [30, 1, alice, 'nvidia-cuda-mps-control', '/tmp/nvidia-mps'], // alice's own `nvidia-cuda-mps-control -d`
    [31, 30, alice, 'nvidia-cuda-mps-server', '/tmp/nvidia-mps'],
    [40, 1, me.uid, 'nvidia-cuda-mps-control', '/tmp/nvidia-mps'], // an administrator's daemon, not gpushare's
    [41, 40, alice, 'nvidia-cuda-mps-server', '/tmp/nvidia-mps'],
    [50, 10, alice, 'nvidia-cuda-mps-server', '/tmp/elsewhere'], // a child of ours for another pipe: not its server
  ]);
  const mps = new RealMpsControl({ runtimeDir, identity: me, procRoot: proc, userName: (uid) => (uid === alice ? 'alice' : me.user) });
  assert.deepEqual([...mps.ownServerPids()], [11]);
  assert.deepEqual(mps.status([{ index: 0, uuid: 'GPU-0' }])[0].serverPids, [11], "the daemon's status names the same server");
});

test("a process that only calls itself nvidia-cuda-mps-server (no control daemon started it) holds no one's MPS; a user's own daemon does", asRoot, () => {
  const runtimeDir = join(scratch, 'forged-run');
  const forged: Array<[number, number, number, string, string]> = [
    [20, 1, alice, 'bash', '/tmp/nvidia-mps'],
    [21, 20, alice, 'nvidia-cuda-mps-server', '/tmp/nvidia-mps'],
  ];
  const statusOver = (proc: string) => new RealMpsControl({ runtimeDir, identity: me, procRoot: proc, userName: (uid) => (uid === alice ? 'alice' : me.user) }).status([{ index: 0, uuid: 'GPU-0' }])[0];
  assert.equal(statusOver(fakeProc(forged)).state, 'off');
  const held = statusOver(fakeProc([...forged, [30, 1, alice, 'nvidia-cuda-mps-control', '/tmp/nvidia-mps'], [31, 30, alice, 'nvidia-cuda-mps-server', '/tmp/nvidia-mps']]));
  assert.deepEqual([held.state, held.heldBy, held.controlPid, held.serverPids], ['held', 'alice', 30, [31]]);
});
