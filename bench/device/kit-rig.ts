// What the device kit's checks share: where the kit's parts are, the machine, nvidia-smi, a personal
// engine in a private folder, `gpushare` commands, Python programs, and ending whatever a check left.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface KitContext {
  out: string;
  simulate: boolean;
  /** Set in every process a check starts (GPUSHARE_KIT_MARK): what is left with it is ended after the check. */
  mark: string;
  machine: Machine;
}

export interface Machine {
  host: string;
  gpus: string[];
  driver: string | null;
  python: string | null;
  /** null when PyTorch sees a CUDA GPU; else why the PyTorch checks are skipped. */
  torchProblem: string | null;
  torch: string | null;
  /** null when nvidia-smi answers; else why the comparisons are skipped. */
  smiProblem: string | null;
}

/** The app root (a kit's device/app, or the checkout) and the kit's Python programs. */
const appRoot = fileURLToPath(new URL('../../../', import.meta.url));
const kitChecks = fileURLToPath(new URL('../../../../checks/', import.meta.url));
export const checksDir = existsSync(kitChecks) ? kitChecks : join(appRoot, 'bench', 'device', 'checks');
export const gpushareCli = join(appRoot, 'electron', 'cli', 'gpushare.js');
export const nativeBuild = (part: 'nvml' | 'preload' | 'fakegpu'): string => join(appRoot, 'native', part, 'build', part === 'nvml' ? 'Release' : '');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (or its bound), without a shell. */
export function run(file: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, args, { env: options.env ?? process.env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : null) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (error && code === null ? error.message : '') });
    });
  });
}

function which(program: string): string | null {
  const found = spawnSync('sh', ['-c', 'command -v "$1"', 'which', program], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

/** The machine as the checks need it: its GPUs, driver, Python with PyTorch, nvidia-smi. */
export async function describeMachine(simulate: boolean): Promise<Machine> {
  const machine: Machine = { host: hostname(), gpus: [], driver: null, python: which('python3'), torchProblem: null, torch: null, smiProblem: null };
  if (simulate) {
    machine.smiProblem = 'dry run on the simulated driver: nvidia-smi is the real driver\'s';
    machine.torchProblem = 'dry run on the simulated driver: PyTorch needs the real CUDA driver';
    machine.gpus = ['simulated a100-40gb'];
    return machine;
  }
  const smi = which('nvidia-smi');
  if (!smi) machine.smiProblem = 'nvidia-smi is not on PATH';
  else {
    const listed = await run(smi, ['--query-gpu=index,name,memory.total,driver_version,compute_mode,mig.mode.current', '--format=csv,noheader'], { timeoutMs: 30_000 });
    if (listed.code !== 0) machine.smiProblem = `nvidia-smi failed: ${(listed.stderr || listed.stdout).trim()}`;
    else {
      machine.gpus = listed.stdout.trim().split('\n').filter(Boolean);
      machine.driver = machine.gpus[0]?.split(',')[3]?.trim() ?? null;
    }
  }
  if (!machine.python) machine.torchProblem = 'python3 is not on PATH';
  else {
    const probe = await run(machine.python, ['-c', 'import torch,json;print(json.dumps([torch.__version__, torch.version.cuda, torch.cuda.is_available()]))'], { timeoutMs: 90_000 });
    if (probe.code !== 0) machine.torchProblem = `PyTorch cannot be imported: ${lastLine(probe.stderr)}`;
    else {
      const [version, cuda, available] = JSON.parse(lastLine(probe.stdout)) as [string, string | null, boolean];
      machine.torch = `${version} (CUDA ${cuda})`;
      if (!available) machine.torchProblem = `PyTorch ${version} sees no CUDA GPU`;
    }
  }
  return machine;
}

export const lastLine = (text: string): string => text.trim().split('\n').pop() ?? '';

/** SIGKILLs every process whose environment holds this mark (root reads every environment); returns their pids and names. */
export function killMarked(mark: string): string[] {
  if (!mark) return [];
  const needle = `GPUSHARE_KIT_MARK=${mark}\0`;
  const ended: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'latin1').includes(needle)) continue;
      const name = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      process.kill(Number(entry), 'SIGKILL');
      ended.push(`${entry} ${name}`);
    } catch {
      // gone, or not ours to read
    }
  }
  return ended;
}

/** A personal engine for one check, in a private folder of its own (socket, database, logs). */
export class KitEngine {
  readonly env: NodeJS.ProcessEnv;
  private readonly dir: string;
  private child: ChildProcess | null = null;
  output = '';

  constructor(private readonly context: KitContext) {
    this.dir = mkdtempSync(join(tmpdir(), 'gpushare-kit-'));
    this.env = { ...process.env, XDG_RUNTIME_DIR: join(this.dir, 'run'), XDG_CONFIG_HOME: join(this.dir, 'config'), XDG_DATA_HOME: join(this.dir, 'data'), XDG_STATE_HOME: join(this.dir, 'state') };
  }

  async start(): Promise<void> {
    const args = [gpushareCli, 'engine', '--no-demo', ...(this.context.simulate ? ['--simulate', 'a100-40gb'] : [])];
    const child = spawn(process.execPath, args, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      child.stdout!.on('data', (d: Buffer) => {
        seen += d.toString();
        this.output += d.toString();
        if (seen.includes('engine socket:')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`the engine exited (${code}) before it answered:\n${this.output.slice(-2000)}`)));
    });
  }

  /** `gpushare ARGS` against this engine. */
  cli(args: string[], timeoutMs = 60_000): Promise<Ran> {
    return run(process.execPath, [gpushareCli, ...args], { env: this.env, timeoutMs });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    this.quitMpsDaemons = await quitMpsDaemonsUnder(this.dir);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The pids of MPS control daemons the engine left (they outlive it by design, for its jobs) and the kit quit. */
  quitMpsDaemons: number[] = [];
}

/** Quits, as MPS asks (`quit` on its control pipe), every MPS control daemon whose pipe lies under `dir`; kills what is left after 5 s. */
async function quitMpsDaemonsUnder(dir: string): Promise<number[]> {
  const found: Array<{ pid: number; pipe: string }> = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes('nvidia-cuda-mps-control')) continue;
      const pipe = /(?:^|\0)CUDA_MPS_PIPE_DIRECTORY=([^\0]*)/.exec(readFileSync(`/proc/${entry}/environ`, 'latin1'))?.[1];
      if (pipe?.startsWith(`${dir}/`)) found.push({ pid: Number(entry), pipe });
    } catch {
      // gone, or not ours to read
    }
  }
  for (const { pipe } of found) {
    await new Promise<void>((resolve) => {
      const control = spawn('nvidia-cuda-mps-control', [], { env: { ...process.env, CUDA_MPS_PIPE_DIRECTORY: pipe }, stdio: ['pipe', 'ignore', 'ignore'] });
      control.on('error', () => resolve()).on('exit', () => resolve());
      control.stdin!.end('quit\n');
    });
  }
  const until = Date.now() + 5000;
  while (found.some(({ pid }) => existsSync(`/proc/${pid}`)) && Date.now() < until) await sleep(100);
  for (const { pid } of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // quit as asked
    }
  }
  return found.map(({ pid }) => pid);
}

/** The job id and pid `gpushare run` printed ("j3 running on GPU 0, pid 4242"). */
export function parseRunLine(out: string): { id: string; pid: number | null; state: string } | null {
  const m = /\b(j\d+) (\w+)(?:.*?pid (\d+))?/.exec(out);
  return m ? { id: m[1], state: m[2], pid: m[3] ? Number(m[3]) : null } : null;
}

/** Waits for a file a program writes when it is ready or done; its text, or null at the bound. */
export async function waitForFile(path: string, boundMs: number, stillGoing: () => boolean = () => true): Promise<string | null> {
  const until = Date.now() + boundMs;
  while (Date.now() < until) {
    if (existsSync(path)) {
      const text = readFileSync(path, 'utf8');
      if (text.endsWith('\n')) return text; // written whole: the programs end their JSON with a newline
    }
    if (!stillGoing()) return existsSync(path) ? readFileSync(path, 'utf8') : null;
    await sleep(100);
  }
  return null;
}

/** nvidia-smi's per-process memory (MiB) by pid. */
export async function smiProcesses(): Promise<Map<number, number>> {
  const ran = await run('nvidia-smi', ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'], { timeoutMs: 30_000 });
  const byPid = new Map<number, number>();
  for (const line of ran.stdout.trim().split('\n')) {
    const [pid, mib] = line.split(',').map((s) => Number(s.trim()));
    if (Number.isFinite(pid) && Number.isFinite(mib)) byPid.set(pid, mib);
  }
  return byPid;
}

/** Starts a Python program of the kit (checks/NAME) in the background, marked as the check's. */
export function startPython(context: KitContext, program: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess & { log: () => string } {
  let log = '';
  const child = spawn(context.machine.python ?? 'python3', [join(checksDir, program), ...args], { env: { ...process.env, PYTHONUNBUFFERED: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-8000)));
  child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-8000)));
  return Object.assign(child, { log: () => log });
}

export interface CheckOutcome {
  status: 'passed' | 'failed' | 'skipped';
  reason?: string;
  /** Short lines for the summary. */
  lines?: string[];
  figures: Record<string, unknown>;
}

export interface KitCheck {
  name: string;
  title: string;
  boundSeconds: number;
  run(context: KitContext): Promise<CheckOutcome>;
}

export const r1 = (v: number): number => Math.round(v * 10) / 10;
export const scratch = (name: string): string => mkdtempSync(join(tmpdir(), `gpushare-kit-${name}-`));

/** Passed unless a problem was found; the problems are the reason. */
export const verdict = (problems: string[], lines: string[], figures: Record<string, unknown>): CheckOutcome => ({ status: problems.length ? 'failed' : 'passed', reason: problems.join('; ') || undefined, lines, figures });

export const needsTorch = (context: KitContext): CheckOutcome | null =>
  context.machine.torchProblem ? { status: 'skipped', reason: `${context.machine.torchProblem}`, figures: {} } : null;

