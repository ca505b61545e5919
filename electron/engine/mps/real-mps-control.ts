// MPS on a real driver: nvidia-cuda-mps-control -d per GPU or per MIG slice (its own pipe and log
// directories; a slice's daemon runs with CUDA_VISIBLE_DEVICES=MIG-<uuid>, as NVIDIA's MPS docs say),
// commands through its pipe (`echo CMD | nvidia-cuda-mps-control`, here as stdin, never a shell),
// and who runs MPS from /proc: the control daemons and servers and their owners.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { MpsGpuStatus, MpsSliceStatus } from '../../../shared/spatial.js';
import { lookupAccount } from '../accounts.js';
import { toolEnvironment } from '../root-env.js';
import { readEnvironVariables, readSmallText, readStart } from '../proc/bounded-read.js';
import { DEFAULT_MPS_PIPE_DIR, heldMessage, MPS_SERVER_COMMAND, mpsDirectories, mpsSliceDirectories, sliceLabel, type GpuRef, type MpsControl, type MpsIdentity, type SliceRef } from './mps-control.js';

/** One daemon: a GPU's (slice null) or a MIG slice's. */
interface Target {
  gpu: number;
  /** What the daemon is started with in CUDA_VISIBLE_DEVICES. */
  visible: string;
  slice: SliceRef | null;
}
const label = (target: Target): string => (target.slice ? sliceLabel(target.slice) : `GPU ${target.gpu}`);
const gpuTarget = (gpu: number, uuid = String(gpu)): Target => ({ gpu, visible: uuid, slice: null });
const sliceTarget = (slice: SliceRef): Target => ({ gpu: slice.gpu, visible: slice.uuid, slice });

const CONTROL = 'nvidia-cuda-mps-control';
const SERVER = MPS_SERVER_COMMAND;
const COMMAND_TIMEOUT_MS = 5000;
const PATH_MAX = 4096;
/** The variables of a daemon's environment read, each to a path's length; no other is kept. */
const MPS_ENVIRONMENT = new Set(['CUDA_MPS_PIPE_DIRECTORY', 'CUDA_VISIBLE_DEVICES']);

export interface MpsProcess {
  pid: number;
  ppid: number;
  role: 'control' | 'server';
  uid: number;
  /** From its environment when readable (our own processes, or as root); null otherwise. */
  pipeDir: string | null;
  /** Its CUDA_VISIBLE_DEVICES (a slice daemon's MIG-… UUID), when readable and set. */
  visibleDevices: string | null;
}

/** Every MPS control daemon and server /proc shows. */
export function findMpsProcesses(procRoot = '/proc'): MpsProcess[] {
  const found: MpsProcess[] = [];
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return found;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const dir = join(procRoot, name);
    try {
      // any process's command line may be megabytes: argv[0] is a path, at most PATH_MAX
      const argv0 = (readStart(join(dir, 'cmdline'), PATH_MAX, 'latin1') ?? '').split('\0')[0];
      const exe = basename(argv0);
      const role = exe === CONTROL ? 'control' : exe === SERVER ? 'server' : null;
      if (!role) continue;
      const stat = readSmallText(join(dir, 'stat'), 4096, 'latin1');
      if (stat === null) continue;
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const env = readEnviron(dir);
      const pipeDir = env === null ? null : (env.get('CUDA_MPS_PIPE_DIRECTORY') ?? DEFAULT_MPS_PIPE_DIR);
      found.push({ pid: Number(name), ppid, role, uid: statSync(dir).uid, pipeDir, visibleDevices: env?.get('CUDA_VISIBLE_DEVICES') ?? null });
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return found.sort((a, b) => a.pid - b.pid);
}

function readEnviron(dir: string): Map<string, string> | null {
  return readEnvironVariables(join(dir, 'environ'), MPS_ENVIRONMENT, PATH_MAX); // null: another user's process, its environment private
}

export interface RealMpsControlOptions {
  runtimeDir: string;
  identity: MpsIdentity;
  procRoot?: string;
  /** The control program (tests point it elsewhere). */
  controlProgram?: string;
  userName?: (uid: number) => string;
}

export class RealMpsControl implements MpsControl {
  readonly kind = 'real' as const;
  private readonly program: string;
  private readonly userName: (uid: number) => string;

  constructor(private readonly options: RealMpsControlOptions) {
    this.program = options.controlProgram ?? CONTROL;
    this.userName = options.userName ?? ((uid) => lookupAccount(uid).name);
  }

  status(gpus: readonly GpuRef[]): MpsGpuStatus[] {
    const procs = findMpsProcesses(this.options.procRoot);
    return gpus.map((gpu) => this.statusOf(gpuTarget(gpu.index, gpu.uuid), procs));
  }

  start(gpu: GpuRef): MpsGpuStatus {
    return this.startTarget(gpuTarget(gpu.index, gpu.uuid));
  }

  stop(gpu: GpuRef): MpsGpuStatus {
    return this.stopTarget(gpuTarget(gpu.index, gpu.uuid));
  }

  clientEnv(gpu: number): Record<string, string> {
    return this.daemonEnv(gpuTarget(gpu));
  }

  terminateClient(gpu: number, clientPid: number): boolean {
    return this.terminate(gpuTarget(gpu), clientPid);
  }

  sliceStatus(slices: readonly SliceRef[]): MpsSliceStatus[] {
    const procs = findMpsProcesses(this.options.procRoot);
    return slices.map((slice) => this.sliceView(slice, this.statusOf(sliceTarget(slice), procs), procs));
  }

  startSlice(slice: SliceRef): MpsSliceStatus {
    const status = this.startTarget(sliceTarget(slice));
    return this.sliceView(slice, status, findMpsProcesses(this.options.procRoot));
  }

  stopSlice(slice: SliceRef): MpsSliceStatus {
    const status = this.stopTarget(sliceTarget(slice));
    return this.sliceView(slice, status, findMpsProcesses(this.options.procRoot));
  }

  /** A control daemon runs inside the slice: ours (its pipe), or anyone's started with its MIG UUID (where /proc lets us read it). */
  private sliceView(slice: SliceRef, status: MpsGpuStatus, procs: MpsProcess[]): MpsSliceStatus {
    const { pipeDir } = mpsSliceDirectories(this.options.runtimeDir, slice);
    const daemon = procs.find((p) => p.role === 'control' && ((p.uid === this.options.identity.uid && p.pipeDir === pipeDir) || p.visibleDevices === slice.uuid));
    return { ...status, gpuInstanceId: slice.gpuInstanceId, uuid: slice.uuid, daemonRunning: daemon !== undefined, ...(daemon ? { daemonUser: this.userName(daemon.uid) } : {}) };
  }

  sliceClientEnv(slice: SliceRef): Record<string, string> {
    return this.daemonEnv(sliceTarget(slice));
  }

  ownServerPids(): ReadonlySet<number> {
    const procs = findMpsProcesses(this.options.procRoot);
    const ourDirs = join(this.options.runtimeDir, 'mps') + '/';
    // only the engine's uid makes a control daemon with our pipe in its environment; no user picks their parent
    const controls = procs.filter((p) => p.role === 'control' && p.uid === this.options.identity.uid && p.pipeDir?.startsWith(ourDirs));
    return new Set(controls.flatMap((control) => serversOf(control, procs)));
  }

  terminateSliceClient(slice: SliceRef, clientPid: number): boolean {
    return this.terminate(sliceTarget(slice), clientPid);
  }

  private directories(target: Target): { pipeDir: string; logDir: string } {
    return target.slice ? mpsSliceDirectories(this.options.runtimeDir, target.slice) : mpsDirectories(this.options.runtimeDir, target.gpu);
  }

  private daemonEnv(target: Target): Record<string, string> {
    const { pipeDir, logDir } = this.directories(target);
    return { CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_LOG_DIRECTORY: logDir };
  }

  private startTarget(target: Target): MpsGpuStatus {
    const now = this.statusOf(target, findMpsProcesses(this.options.procRoot));
    if (now.state === 'ours') return now;
    if (now.state === 'held') throw new Error(`Cannot start MPS on ${label(target)}: ${now.message}`);
    const { pipeDir, logDir } = this.directories(target);
    mkdirSync(pipeDir, { recursive: true, mode: 0o755 });
    mkdirSync(logDir, { recursive: true, mode: 0o755 });
    const run = spawnSync(this.program, ['-d'], {
      env: toolEnvironment({ CUDA_VISIBLE_DEVICES: target.visible, CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_LOG_DIRECTORY: logDir }),
      timeout: COMMAND_TIMEOUT_MS,
      encoding: 'utf8',
    });
    if (run.error) {
      const missing = (run.error as NodeJS.ErrnoException).code === 'ENOENT';
      throw new Error(missing ? `${this.program} is not installed (it comes with the NVIDIA driver's compute utilities).` : `${this.program} -d failed: ${run.error.message}`);
    }
    if (run.status !== 0) throw new Error(`${this.program} -d exited ${run.status}: ${(run.stderr || run.stdout).trim() || 'no output'} (log: ${logDir}).`);
    return this.statusOf(target, findMpsProcesses(this.options.procRoot));
  }

  private stopTarget(target: Target): MpsGpuStatus {
    const now = this.statusOf(target, findMpsProcesses(this.options.procRoot));
    if (now.state === 'held') throw new Error(`Cannot stop MPS on ${label(target)}: it is not ours. ${now.message}`);
    if (now.state === 'ours') this.control(target, 'quit');
    return this.statusOf(target, findMpsProcesses(this.options.procRoot));
  }

  private terminate(target: Target, clientPid: number): boolean {
    const servers = this.control(target, 'get_server_list')
      .split(/\s+/)
      .filter((t) => /^\d+$/.test(t));
    let done = false;
    for (const server of servers) {
      const reply = this.control(target, `terminate_client ${server} ${clientPid}`);
      if (!/error|invalid|not found/i.test(reply)) done = true;
    }
    return done;
  }

  /** One command through our pipe for this daemon; its reply. */
  private control(target: Target, command: string): string {
    const run = spawnSync(this.program, [], {
      input: command + '\n',
      env: toolEnvironment(this.daemonEnv(target)),
      timeout: COMMAND_TIMEOUT_MS,
      encoding: 'utf8',
    });
    if (run.error) throw new Error(`${this.program} (${command}) failed: ${run.error.message}`);
    return `${run.stdout ?? ''}${run.stderr ?? ''}`.trim();
  }

  private statusOf(target: Target, listed: MpsProcess[]): MpsGpuStatus {
    // a "server" no control daemon started is no MPS, only a name (exec -a) that must not hold MPS from everyone
    const controls = new Set(listed.filter((p) => p.role === 'control').map((p) => p.pid));
    const procs = listed.filter((p) => p.role === 'control' || controls.has(p.ppid));
    const gpu = target.gpu;
    const { pipeDir } = this.directories(target);
    const me = this.options.identity;
    const control = procs.find((p) => p.role === 'control' && p.uid === me.uid && p.pipeDir === pipeDir);
    if (control) {
      const servers = serversOf(control, procs);
      return { gpu, state: 'ours', user: me.user, controlPid: control.pid, serverPids: servers, pipeDir, message: `MPS runs for ${label(target)} (${CONTROL} pid ${control.pid}, pipe ${pipeDir}).` };
    }
    // servers our own daemons started run as their clients' users: they are ours too
    const ourControls = new Set(procs.filter((p) => p.role === 'control' && p.uid === me.uid).map((p) => p.pid));
    const other = procs.find((p) => p.uid !== me.uid && !ourControls.has(p.ppid));
    if (other) {
      const user = this.userName(other.uid);
      return { gpu, state: 'held', user, heldBy: user, controlPid: other.role === 'control' ? other.pid : null, serverPids: procs.filter((p) => p.role === 'server' && p.uid === other.uid).map((p) => p.pid), pipeDir: other.pipeDir, message: heldMessage(user, `${other.role === 'control' ? CONTROL : SERVER} pid ${other.pid}`) };
    }
    const socket = join(DEFAULT_MPS_PIPE_DIR, 'control');
    if (procs.length === 0 && existsSync(socket)) {
      const uid = statSync(socket).uid;
      if (uid !== me.uid) {
        const user = this.userName(uid);
        return { gpu, state: 'held', user, heldBy: user, controlPid: null, serverPids: [], pipeDir: DEFAULT_MPS_PIPE_DIR, message: heldMessage(user, `its pipe ${socket}; no daemon process is visible here`) };
      }
    }
    const ourDirs = join(this.options.runtimeDir, 'mps') + '/'; // our other daemons (other GPUs, slices) are no stranger's
    const mine = procs.find((p) => p.role === 'control' && p.uid === me.uid && !p.pipeDir?.startsWith(ourDirs));
    const note = mine ? ` A daemon of ${me.user} runs with pipe ${mine.pipeDir ?? '?'} (pid ${mine.pid}), not gpushare's.` : '';
    return { gpu, state: 'off', user: null, controlPid: null, serverPids: [], pipeDir: null, message: `No MPS daemon serves ${label(target)}.${note}` };
  }
}

/** The servers a control daemon started: its children, for its pipe (a name and an environment alone anyone can forge). */
function serversOf(control: MpsProcess, procs: readonly MpsProcess[]): number[] {
  return procs.filter((p) => p.role === 'server' && p.ppid === control.pid && p.pipeDir === control.pipeDir).map((p) => p.pid);
}
