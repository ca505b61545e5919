// The simulated NVIDIA driver (native/fakegpu): a state file that the fake
// libnvidia-ml.so.1 and libcuda.so.1 share, and the processes that use it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensurePrivateDir, fakegpuBuildDir, packageRoot, runtimeDir } from '../paths.js';
import { toolEnvironment } from '../root-env.js';
import { DEFAULT_SCENARIO, POINTED_BOX, scenarioOfStateFile } from './simulated-box-names.js';

export interface FakegpuProcess {
  pid: number;
  type: 'compute' | 'graphics' | 'mps';
  usedMemory: number;
  gpuInstanceId: number;
  computeInstanceId: number;
  /** cuCheckpointProcess* state; a checkpointed process is off NVML's lists. */
  checkpointState: 'running' | 'locked' | 'checkpointed' | 'failed';
  /** Bytes a checkpoint moved to host memory (not in usedMemory). */
  parkedMemory: number;
}

export interface FakegpuMigDevice {
  index: number;
  uuid: string;
  name: string;
  profileName: string;
  profileId: number;
  gpuInstanceId: number;
  computeInstanceId: number;
  memoryTotal: number;
  memoryUsed: number;
  smCount: number;
  placement: { start: number; size: number };
  /** Compute slices of its profile (3 for a 3g slice); null where the table has no such profile. */
  computeSlices: number | null;
}

export interface FakegpuDevice {
  index: number;
  uuid: string;
  name: string;
  pciBusId: string;
  memoryTotal: number;
  memoryUsed: number;
  memoryReserved: number;
  smCount: number;
  temperatureC: number;
  powerMilliwatts: number;
  powerLimitMilliwatts: number;
  smClockMHz: number;
  memClockMHz: number;
  computeMode: number;
  migMode: { current: number; pending: number };
  /** In MIG mode, the most compute slices of a profile (7 on an A100 or H100); null otherwise. */
  migComputeSlices: number | null;
  lost: boolean;
  utilizationGpu: number;
  utilizationMemory: number;
  migDevices: FakegpuMigDevice[];
  processes: FakegpuProcess[];
}

export interface FakegpuState {
  driverVersion: string;
  nvmlVersion: string;
  cudaDriverVersion: number;
  v3RecordSize: 24 | 32;
  faults: Array<{ call: string; code: number; device: number }>;
  devices: FakegpuDevice[];
}

export interface KernelRecord {
  pid: number;
  enqueueNs: number;
  startNs: number;
  endNs: number;
}

/** One JSON line printed by fakejob. */
export interface FakejobEvent {
  event: string;
  [key: string]: unknown;
}

export interface FakejobHandle {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly events: FakejobEvent[];
  /** Resolves with the "ready" event; rejects if the job exits first. */
  readonly ready: Promise<FakejobEvent>;
  /** Resolves when the process exits, with its exit code (null when killed). */
  readonly exited: Promise<number | null>;
  /** Resolves with the first event of this kind; rejects if the job exits first. */
  waitFor(event: string): Promise<FakejobEvent>;
  kill(signal?: NodeJS.Signals): void;
}

const tool = (name: string): string => join(fakegpuBuildDir(), name);

export function simulatedDriverBuilt(): boolean {
  return ['libnvidia-ml.so.1', 'libcuda.so.1', 'fakejob', 'fakegpu'].every((f) => existsSync(tool(f)));
}

export function listScenarios(): string[] {
  const dir = join(packageRoot(), 'native', 'fakegpu', 'scenarios');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.scn')).map((f) => f.slice(0, -4)).sort();
}

function runFakegpu(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(tool('fakegpu'), args, { maxBuffer: 64 * 1024 * 1024, env: toolEnvironment() }, (error, stdout, stderr) => {
      if (error) reject(new Error(`fakegpu ${args[0]} failed: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
  });
}

export interface SimulatedDriverOptions {
  scenario: string;
  /** Use (and keep) this state file; by default a fresh one in a temp dir, removed on dispose. */
  statePath?: string;
  /** Reuse an existing state file at statePath instead of re-initialising it. */
  reuse?: boolean;
}

export class SimulatedDriver {
  readonly libDir = fakegpuBuildDir();
  readonly nvmlLibraryPath = join(fakegpuBuildDir(), 'libnvidia-ml.so.1');
  /** The fake libcuda.so.1: what the engine itself loads for the checkpoint calls. */
  readonly cudaLibraryPath = join(fakegpuBuildDir(), 'libcuda.so.1');
  private readonly jobs = new Set<FakejobHandle>();

  private constructor(
    readonly scenario: string,
    readonly statePath: string,
    private readonly ownedDir: string | null,
  ) {}

  static async create(options: SimulatedDriverOptions): Promise<SimulatedDriver> {
    if (!simulatedDriverBuilt()) {
      throw new Error(`The simulated GPU driver is not built (${fakegpuBuildDir()} is missing files). Run \`npm run build:native\`.`);
    }
    const known = listScenarios();
    if (!options.scenario.includes('/') && !known.includes(options.scenario)) {
      throw new Error(`Unknown simulated GPU scenario "${options.scenario}". Known scenarios: ${known.join(', ')}.`);
    }
    let ownedDir: string | null = null;
    let statePath = options.statePath;
    if (!statePath) {
      const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
      ownedDir = mkdtempSync(join(base, 'gpushare-sim-'));
      statePath = join(ownedDir, 'state');
    }
    const driver = new SimulatedDriver(options.scenario, statePath, ownedDir);
    // a state file from an older build of the simulated driver does not load: start that box afresh
    const reusable = options.reuse && existsSync(statePath) && (await driver.dump().then(() => true, () => false));
    if (!reusable) await runFakegpu(['init', '--state', statePath, '--scenario', options.scenario]);
    return driver;
  }

  /** The per-user simulated box that `gpushare … --simulate` uses, kept between runs. */
  static async shared(scenario: string, where: { dir?: string; everyone?: boolean } = {}): Promise<SimulatedDriver> {
    const dir = where.dir ?? runtimeDir();
    if (where.everyone) mkdirSync(dir, { recursive: true, mode: 0o755 });
    else ensurePrivateDir(dir);
    const name = scenario.includes('/') ? 'custom' : scenario;
    const driver = await SimulatedDriver.create({ scenario, statePath: join(dir, `sim-${name}.state`), reuse: true });
    // the box daemon's simulated GPUs serve every user's jobs, as /dev/nvidia* does (mode 0666)
    if (where.everyone) chmodSync(driver.statePath, 0o666);
    return driver;
  }

  /** The box a scenario names; POINTED_BOX: the one $GPUSHARE_FAKEGPU_STATE names (as `gpushare sim env` sets it), else DEFAULT_SCENARIO's. */
  static async named(scenario: string, where: { dir?: string; everyone?: boolean } = {}): Promise<SimulatedDriver> {
    if (scenario !== POINTED_BOX) return SimulatedDriver.shared(scenario, where);
    const pointed = process.env.GPUSHARE_FAKEGPU_STATE;
    return pointed && !where.everyone ? SimulatedDriver.pointedAt(pointed) : SimulatedDriver.shared(DEFAULT_SCENARIO, where); // the daemon's box is everyone's, in its own dir
  }

  /** The box at a state file someone else made (what `gpushare sim env` pointed a shell at), as it is. */
  static async pointedAt(statePath: string): Promise<SimulatedDriver> {
    if (!simulatedDriverBuilt()) {
      throw new Error(`The simulated GPU driver is not built (${fakegpuBuildDir()} is missing files). Run \`npm run build:native\`.`);
    }
    const driver = new SimulatedDriver(scenarioOfStateFile(statePath), statePath, null);
    await driver.dump().catch((error: Error) => {
      throw new Error(`GPUSHARE_FAKEGPU_STATE points at ${statePath}, which is no simulated box (${error.message}). Run \`gpushare sim env\` again, or unset it.`);
    });
    return driver;
  }

  /** Environment for a process that should see the simulated GPUs. */
  get env(): Record<string, string> {
    const ld = process.env.LD_LIBRARY_PATH;
    return {
      GPUSHARE_FAKEGPU_STATE: this.statePath,
      GPUSHARE_NVML_LIB: this.nvmlLibraryPath,
      LD_LIBRARY_PATH: ld ? `${this.libDir}:${ld}` : this.libDir,
    };
  }

  async dump(): Promise<FakegpuState> {
    return JSON.parse(await runFakegpu(['dump', '--state', this.statePath])) as FakegpuState;
  }

  async fault(args: string[]): Promise<void> {
    await runFakegpu(['fault', '--state', this.statePath, ...args]);
  }

  async set(device: number, values: Record<string, string | number>): Promise<void> {
    const pairs = Object.entries(values).map(([k, v]) => `${k}=${v}`);
    await runFakegpu(['set', '--state', this.statePath, '--device', String(device), ...pairs]);
  }

  async attach(opts: { device: number; pid: number; mem: number; type?: FakegpuProcess['type']; mig?: number }): Promise<void> {
    const args = ['attach', '--state', this.statePath, '--device', String(opts.device), '--pid', String(opts.pid), '--mem', String(opts.mem)];
    if (opts.type) args.push('--type', opts.type);
    if (opts.mig !== undefined) args.push('--mig', String(opts.mig));
    await runFakegpu(args);
  }

  async execlog(device: number, mig?: number): Promise<KernelRecord[]> {
    const args = ['execlog', '--state', this.statePath, '--device', String(device)];
    if (mig !== undefined) args.push('--mig', String(mig));
    const out = await runFakegpu(args);
    return out.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as KernelRecord);
  }

  /** Start a fakejob against this driver; it is killed on dispose(). `argv0`: the name /proc shows for it (as `exec -a` does). */
  spawnFakejob(args: string[], extraEnv: Record<string, string> = {}, argv0?: string): FakejobHandle {
    const child = spawn(tool('fakejob'), args, {
      ...(argv0 ? { argv0 } : {}),
      env: { ...process.env, ...this.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const handle = watchFakejob(child);
    this.jobs.add(handle);
    void handle.exited.then(() => this.jobs.delete(handle));
    return handle;
  }

  async dispose(): Promise<void> {
    for (const job of this.jobs) job.kill('SIGKILL');
    await Promise.all([...this.jobs].map((j) => j.exited));
    if (this.ownedDir) rmSync(this.ownedDir, { recursive: true, force: true });
  }
}

function watchFakejob(child: ChildProcess): FakejobHandle {
  const events: FakejobEvent[] = [];
  const waiters: Array<{ event: string; resolve: (e: FakejobEvent) => void; reject: (e: Error) => void }> = [];
  let stderr = '';
  let exitCode: number | null | undefined;
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()).length > 8192 && (stderr = stderr.slice(-8192)));
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => { // after stdout is drained, so no event is lost
      exitCode = code;
      const why = new Error(`fakejob ${child.pid} exited (${code ?? 'killed'}) before the event${stderr ? ': ' + stderr.trim() : ''}`);
      for (const w of waiters.splice(0)) w.reject(why);
      resolve(code);
    });
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let event: FakejobEvent;
    try {
      event = JSON.parse(line) as FakejobEvent;
    } catch {
      return; // not one of ours: fakejob prints only JSON lines
    }
    events.push(event);
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].event === event.event) waiters.splice(i, 1)[0].resolve(event);
    }
  });
  const waitFor = (event: string): Promise<FakejobEvent> => {
    const seen = events.find((e) => e.event === event);
    if (seen) return Promise.resolve(seen);
    if (exitCode !== undefined) return Promise.reject(new Error(`fakejob ${child.pid} already exited (${exitCode})`));
    return new Promise((resolve, reject) => waiters.push({ event, resolve, reject }));
  };
  const ready = waitFor('ready');
  ready.catch(() => undefined); // callers that never await ready must not see an unhandled rejection
  return {
    child,
    pid: child.pid!,
    events,
    ready,
    exited,
    waitFor,
    kill: (signal = 'SIGTERM') => {
      if (exitCode === undefined) child.kill(signal);
    },
  };
}
