// A Slurm job that asked for gres/mps, on the simulated driver: the prolog's registration starts its GPU's MPS
// daemon, the task prolog (the compiled `gpushare slurm task-prolog`, asking the engine's socket) exports the
// daemon's client variables with the job's share, the task enrols as an MPS client at that share, and the daemon
// stays between the job's tasks until its epilog. Slurm itself is emulated by the pid → job answer slurmd gives
// (`scontrol pidinfo`): every process of one session is the job's. The record: the fakegpu MPS state.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensurePreloadBuilt } from '../gate/testing/launch-gate-sim.js';
import { LaunchGate, preloadLibraryPath } from '../gate/launch-gate.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { listenOnSocket } from '../server/socket-server.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { CLI_ENV, CLI_PATH } from '../../cli/testing/compiled-cli.js';
import { sessionOf } from '../../testing/proc-session.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const FAKEGPU = join(fakegpuBuildDir(), 'fakegpu');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-slurm-mps-', (rig) => ({ driver, nvml, dir } = rig));
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';

interface FakegpuDaemon {
  running: boolean;
  pipeDir: string;
  clients: Array<{ pid: number; share: number }>;
}
const daemon = (): FakegpuDaemon => (JSON.parse(execFileSync(FAKEGPU, ['mps', '--state', driver.statePath, 'status'], { encoding: 'utf8' })) as FakegpuDaemon[])[0];

test('gres/mps: the prolog starts the GPU\'s MPS daemon, the task prolog exports its client variables at the job\'s 25 %, the task enrols as its client at 25 %, the daemon outlives the task and stops at the epilog', { skip }, async () => {
  let jobSession = -1; // slurmd's word: every process of this session is Slurm job 77
  const gate = LaunchGate.create({ dir: join(dir, 'mps'), heartbeatIntervalMs: 200 });
  const r = schedulerRig({ driver, nvml, dir }, 'mps', { gate, slurmPidInfo: (pid) => (sessionOf(pid) === jobSession ? '77' : null) }, cleanups);
  const socketPath = join(dir, 'mps', 'engine.sock');
  const server = await listenOnSocket(r.engine, socketPath);
  cleanups.push(() => server.close());

  assert.equal(daemon().running, false, 'no MPS daemon before the prolog');
  const view = await r.engine.call('slurm.prolog', { jobId: '77', uid: process.getuid!(), gpus: [0], mpsPercent: 25, partition: 'gpu', node: 'gpu1' });
  assert.deepEqual(view.mps, { started: true });
  assert.equal(daemon().running, true, "the prolog started GPU 0's daemon");

  // the task: a session of its own (as slurmstepd's task), its task prolog first, then the program with what it exported
  const env = { PATH: '/usr/bin:/bin', HOME: dir, ...CLI_ENV, GPUSHARE_DAEMON_SOCKET: socketPath };
  const task = spawn('sh', ['-c', `"${process.execPath}" "${CLI_PATH}" slurm task-prolog; echo ---; cat`], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => task.kill('SIGKILL'));
  jobSession = task.pid!; // detached: the shell leads a session of its own
  let out = '';
  task.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exported = await r.until('the task prolog printed its lines', async () => (out.includes('---') ? out : undefined));
  task.stdin!.end();
  const exports = Object.fromEntries(exported.split('\n').filter((l) => l.startsWith('export ')).map((l) => l.slice(7).split(/=(.*)/s).slice(0, 2)));
  assert.equal(exports.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, '25', exported);
  assert.equal(exports.CUDA_MPS_PIPE_DIRECTORY, daemon().pipeDir, "its pipe directory is the running daemon's");
  assert.ok(exports.LD_PRELOAD?.includes(preloadLibraryPath()), 'the preload library too');

  // the program, in the job's session (under its shell, as slurmstepd starts it), with the task prolog's environment
  const program = spawn('sh', ['-c', '"$0" "$@" & wait', FAKEJOB, '--mem', '256M', 'train', '--kernel-ms', '2', '--duration', '60'], {
    env: { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, ...exports, GPUSHARE_SOCKET: socketPath, GPUSHARE_PRELOAD_DEBUG: '1' },
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let programErr = '';
  program.stderr!.on('data', (d: Buffer) => (programErr += d.toString()));
  const killTask = (): void => {
    try {
      process.kill(-program.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  };
  cleanups.push(killTask);
  jobSession = program.pid!; // slurmd now says the program's session is job 77's
  const enrolled = await r.until('the task enrolled as the Slurm job', async () => (await r.engine.call('jobs.list', {})).find((j) => j.enrolled?.slurm?.jobId === '77' && j.pid !== null)).catch((e: Error) => {
    throw new Error(`${e.message}\nthe program said: ${programErr}`);
  });
  assert.deepEqual([enrolled.mode, enrolled.mpsSharePercent], ['mps', 25]);
  await r.until('the program is a client of the daemon at 25 %', async () => daemon().clients.some((c) => c.pid === enrolled.pid && c.share === 25) || undefined);

  assert.equal(sessionOf(enrolled.pid!), program.pid, "the job's task");
  killTask();
  await r.until('its enrolled job ended', async () => ['finished', 'failed', 'lost'].includes((await r.job(enrolled.id))?.state ?? '') || undefined);
  assert.equal(daemon().running, true, 'the Slurm job still runs: its daemon stays for its next task');

  const ended = await r.engine.call('slurm.epilog', { jobId: '77' });
  assert.equal(ended.mpsFailure, undefined);
  assert.equal(daemon().running, false, 'the epilog let go of the last holder: the daemon started for it stopped');
});
