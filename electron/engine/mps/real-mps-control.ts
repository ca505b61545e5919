// MPS on a real driver: nvidia-cuda-mps-control -d per GPU (its own pipe and log directories),
// commands through its pipe (`echo CMD | nvidia-cuda-mps-control`, here as stdin, never a shell),
// and who runs MPS from /proc: the control daemons and servers and their owners.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { MpsGpuStatus } from '../../../shared/spatial.js';
import { lookupAccount } from '../accounts.js';
import { DEFAULT_MPS_PIPE_DIR, heldMessage, mpsDirectories, type GpuRef, type MpsControl, type MpsIdentity } from './mps-control.js';

const CONTROL = 'nvidia-cuda-mps-control';
const SERVER = 'nvidia-cuda-mps-server';
const COMMAND_TIMEOUT_MS = 5000;

export interface MpsProcess {
  pid: number;
  ppid: number;
  role: 'control' | 'server';
  uid: number;
  /** From its environment when readable (our own processes, or as root); null otherwise. */
  pipeDir: string | null;
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
      const argv0 = readFileSync(join(dir, 'cmdline'), 'latin1').split('\0')[0];
      const exe = basename(argv0);
      const role = exe === CONTROL ? 'control' : exe === SERVER ? 'server' : null;
      if (!role) continue;
      const stat = readFileSync(join(dir, 'stat'), 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid: Number(name), ppid, role, uid: statSync(dir).uid, pipeDir: readPipeDir(dir) });
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return found.sort((a, b) => a.pid - b.pid);
}

function readPipeDir(dir: string): string | null {
  try {
    const env = readFileSync(join(dir, 'environ'), 'latin1').split('\0');
    const entry = env.find((e) => e.startsWith('CUDA_MPS_PIPE_DIRECTORY='));
    return entry ? entry.slice('CUDA_MPS_PIPE_DIRECTORY='.length) : DEFAULT_MPS_PIPE_DIR;
  } catch {
    return null; // another user's process: its environment is private
  }
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
    return gpus.map((gpu) => this.statusOf(gpu.index, procs));
  }

  start(gpu: GpuRef): MpsGpuStatus {
    const now = this.statusOf(gpu.index, findMpsProcesses(this.options.procRoot));
    if (now.state === 'ours') return now;
    if (now.state === 'held') throw new Error(`Cannot start MPS on GPU ${gpu.index}: ${now.message}`);
    const { pipeDir, logDir } = mpsDirectories(this.options.runtimeDir, gpu.index);
    mkdirSync(pipeDir, { recursive: true, mode: 0o755 });
    mkdirSync(logDir, { recursive: true, mode: 0o755 });
    const run = spawnSync(this.program, ['-d'], {
      env: { ...process.env, CUDA_VISIBLE_DEVICES: gpu.uuid, CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_LOG_DIRECTORY: logDir },
      timeout: COMMAND_TIMEOUT_MS,
      encoding: 'utf8',
    });
    if (run.error) {
      const missing = (run.error as NodeJS.ErrnoException).code === 'ENOENT';
      throw new Error(missing ? `${this.program} is not installed (it comes with the NVIDIA driver's compute utilities).` : `${this.program} -d failed: ${run.error.message}`);
    }
    if (run.status !== 0) throw new Error(`${this.program} -d exited ${run.status}: ${(run.stderr || run.stdout).trim() || 'no output'} (log: ${logDir}).`);
    return this.statusOf(gpu.index, findMpsProcesses(this.options.procRoot));
  }

  stop(gpu: GpuRef): MpsGpuStatus {
    const now = this.statusOf(gpu.index, findMpsProcesses(this.options.procRoot));
    if (now.state === 'held') throw new Error(`Cannot stop MPS on GPU ${gpu.index}: it is not ours. ${now.message}`);
    if (now.state === 'ours') this.control(gpu.index, 'quit');
    return this.statusOf(gpu.index, findMpsProcesses(this.options.procRoot));
  }

  clientEnv(gpu: number): Record<string, string> {
    const { pipeDir, logDir } = mpsDirectories(this.options.runtimeDir, gpu);
    return { CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_LOG_DIRECTORY: logDir };
  }

  terminateClient(gpu: number, clientPid: number): boolean {
    const servers = this.control(gpu, 'get_server_list')
      .split(/\s+/)
      .filter((t) => /^\d+$/.test(t));
    let done = false;
    for (const server of servers) {
      const reply = this.control(gpu, `terminate_client ${server} ${clientPid}`);
      if (!/error|invalid|not found/i.test(reply)) done = true;
    }
    return done;
  }

  /** One command through our pipe for this GPU; its reply. */
  private control(gpu: number, command: string): string {
    const run = spawnSync(this.program, [], {
      input: command + '\n',
      env: { ...process.env, ...this.clientEnv(gpu) },
      timeout: COMMAND_TIMEOUT_MS,
      encoding: 'utf8',
    });
    if (run.error) throw new Error(`${this.program} (${command}) failed: ${run.error.message}`);
    return `${run.stdout ?? ''}${run.stderr ?? ''}`.trim();
  }

  private statusOf(gpu: number, procs: MpsProcess[]): MpsGpuStatus {
    const { pipeDir } = mpsDirectories(this.options.runtimeDir, gpu);
    const me = this.options.identity;
    const control = procs.find((p) => p.role === 'control' && p.uid === me.uid && p.pipeDir === pipeDir);
    if (control) {
      const servers = procs.filter((p) => p.role === 'server' && (p.ppid === control.pid || p.pipeDir === pipeDir)).map((p) => p.pid);
      return { gpu, state: 'ours', user: me.user, controlPid: control.pid, serverPids: servers, pipeDir, message: `MPS runs for GPU ${gpu} (${CONTROL} pid ${control.pid}, pipe ${pipeDir}).` };
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
    const mine = procs.find((p) => p.role === 'control' && p.uid === me.uid);
    const note = mine ? ` A daemon of ${me.user} runs with pipe ${mine.pipeDir ?? '?'} (pid ${mine.pid}), not gpushare's.` : '';
    return { gpu, state: 'off', user: null, controlPid: null, serverPids: [], pipeDir: null, message: `No MPS daemon serves GPU ${gpu}.${note}` };
  }
}
