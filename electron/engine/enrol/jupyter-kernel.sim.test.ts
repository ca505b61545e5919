// The Jupyter route on Debian's real Jupyter (python3-jupyter-client, python3-ipykernel) and the
// simulated driver: kernels started by jupyter_client's KernelManager from the kernelspec
// `gpushare jupyter install-kernel` wrote each enrol as one job with the kernelspec's settings; a cell
// past its quota gets CUDA_ERROR_OUT_OF_MEMORY while a second kernel of the same user is unaffected; an
// idle kernel with --auto-park is parked when a queued job needs its memory, and its next cell runs after
// the restore with its device memory intact (read back through the driver). Jupyter's data and runtime
// directories are temp dirs, removed after. Asserts on job states, history and bytes, never on a latency.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { CLI_ENV, CLI_PATH } from '../../cli/testing/compiled-cli.js';
import { ensurePreloadBuilt } from '../gate/testing/launch-gate-sim.js';
import { LaunchGate } from '../gate/launch-gate.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir, packageRoot } from '../paths.js';
import { listenOnSocket } from '../server/socket-server.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const PYTHON = '/usr/bin/python3';
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-jupyter-', (rig) => ({ driver, nvml, dir } = rig));
const jupyterMissing = spawnSync(PYTHON, ['-c', 'import jupyter_client, ipykernel']).status !== 0;
const skip = jupyterMissing ? "Debian's Jupyter is missing (apt install python3-jupyter-client python3-ipykernel)" : ensurePreloadBuilt() ? false : 'native/preload is not built';

/** The first cell of every kernel: the driver through ctypes, as a notebook without a framework would use it. */
const CUDA_CELL = `
import ctypes
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
_dev, _ctx = ctypes.c_int(), ctypes.c_void_p()
assert cu.cuDeviceGet(ctypes.byref(_dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(_ctx), _dev) == 0
assert cu.cuCtxSetCurrent(_ctx) == 0
def alloc(n):
    p = ctypes.c_uint64()
    rc = cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n))
    return rc, p.value
def write(ptr, data):
    return cu.cuMemcpyHtoD_v2(ctypes.c_uint64(ptr), data, ctypes.c_size_t(len(data)))
def read(ptr, n):
    buf = ctypes.create_string_buffer(n)
    rc = cu.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(ptr), ctypes.c_size_t(n))
    return rc, buf.raw
print("ready")
`;

interface Answer { op: string; name?: string; pid?: number; status?: string; stdout?: string; error?: string }

/** Jupyter with its dirs in temp: the KernelManager driver script, one command at a time. */
function jupyter(env: Record<string, string>) {
  const child: ChildProcess = spawn(PYTHON, [join(packageRoot(), 'electron', 'engine', 'testing', 'jupyter-driver.py')], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const answers: Answer[] = [];
  const waiting: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    answers.push(JSON.parse(line) as Answer);
    waiting.splice(0).forEach((w) => w());
  });
  cleanups.push(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  let read = 0;
  const ask = async (command: Record<string, unknown>): Promise<Answer> => {
    child.stdin!.write(JSON.stringify(command) + '\n');
    while (read >= answers.length) await new Promise<void>((resolve) => waiting.push(resolve));
    const a = answers[read++];
    assert.notEqual(a.op, 'failed', `${JSON.stringify(a)}\n${stderr}`);
    return a;
  };
  return {
    start: async (name: string, kernel: string) => (await ask({ op: 'start', name, kernel })).pid!,
    cell: async (name: string, code: string) => {
      const a = await ask({ op: 'exec', name, code });
      assert.equal(a.status, 'ok', `cell in ${name}: ${a.error}\n${stderr}`);
      return a.stdout!.trim();
    },
    stop: (name: string) => ask({ op: 'stop', name }),
    quit: async () => {
      child.stdin!.end(JSON.stringify({ op: 'quit' }) + '\n');
      await new Promise((resolve) => child.once('exit', resolve));
    },
    stderr: () => stderr,
  };
}

async function engineWithSocket(name: string) {
  const gate = LaunchGate.create({ dir: join(dir, name), heartbeatIntervalMs: 200 });
  const r = schedulerRig({ driver, nvml, dir }, name, { gate, autoPark: { idleMs: 300, wakePollMs: 10 } }, cleanups);
  const socketPath = join(dir, name, 'engine.sock');
  const server = await listenOnSocket(r.engine, socketPath);
  cleanups.push(() => server.close());
  return { r, socketPath };
}

/** Jupyter's own directories for one test, in temp; the kernelspecs installed by the CLI into its data dir. */
function jupyterDirs(kernels: Record<string, string[]>): { env: Record<string, string>; data: string } {
  const home = mkdtempSync(join(dir, 'jupyter-'));
  const data = join(home, 'data');
  const env = { JUPYTER_DATA_DIR: data, JUPYTER_PATH: data, JUPYTER_RUNTIME_DIR: join(home, 'runtime'), JUPYTER_CONFIG_DIR: join(home, 'config'), IPYTHONDIR: join(home, 'ipython'), HOME: home };
  mkdirSync(env.JUPYTER_RUNTIME_DIR, { recursive: true });
  for (const [name, options] of Object.entries(kernels)) {
    const out = execFileSync(process.execPath, [CLI_PATH, 'jupyter', 'install-kernel', '--user', '--name', name, ...options], { env: { ...process.env, ...CLI_ENV, ...env }, encoding: 'utf8' });
    assert.match(out, new RegExp(`^wrote ${join(data, 'kernels', name, 'kernel.json')}: `));
  }
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  return { env, data };
}

/** Jupyter shut its kernels down and removed their connection files. */
function assertLeftNothing(env: Record<string, string>, pids: number[]): void {
  for (const pid of pids) assert.equal(existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'latin1').includes(') Z '), false, `kernel ${pid} is gone`);
  assert.deepEqual(readdirSync(env.JUPYTER_RUNTIME_DIR).filter((f) => f.startsWith('kernel-')), [], 'no connection file left');
}

const enrolledOf = (jobs: JobView[], pid: number): JobView | undefined => jobs.find((j) => j.enrolled && j.pid === pid);

test('kernels from the installed kernelspec enrol as one job each; past its quota a cell gets CUDA_ERROR_OUT_OF_MEMORY, a second kernel of the same user is unaffected', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('quota');
  const { env } = jupyterDirs({ 'gs-quota': ['--mem', '256M', '--priority', 'normal'] });
  const nb = jupyter({ PATH: '/usr/bin:/bin', ...driver.env, ...env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000', JPY_SESSION_NAME: '/home/alice/analysis.ipynb' }); // what Jupyter's server sets for a notebook's kernel
  const one = await nb.start('one', 'gs-quota');
  const two = await nb.start('two', 'gs-quota');
  assert.equal(await nb.cell('one', CUDA_CELL), 'ready');
  assert.equal(await nb.cell('two', CUDA_CELL), 'ready');
  assert.equal(await nb.cell('one', `print(alloc(${128 * MiB})[0])`), '0');
  const jobs = await r.until('both kernels enrolled', async () => {
    await nb.cell('two', `print(alloc(${MiB})[0])`);
    const all = await r.engine.call('jobs.list', {});
    return enrolledOf(all, one) && enrolledOf(all, two) ? all : undefined;
  });
  const [jobOne, jobTwo] = [enrolledOf(jobs, one)!, enrolledOf(jobs, two)!];
  assert.notEqual(jobOne.id, jobTwo.id, 'one job per kernel');
  assert.equal(jobOne.memoryQuotaBytes, 256 * MiB, "the kernelspec's --mem is the job's quota");
  assert.equal(jobOne.keepResident, true, 'without --auto-park the kernel keeps its memory');
  assert.equal(jobOne.enrolled?.by, 'notebook', `a notebook's kernel, with the kernelspec's options: ${JSON.stringify(jobOne.enrolled)}`);
  assert.equal(jobOne.enrolled?.name, 'analysis.ipynb', 'named by its notebook (JPY_SESSION_NAME)');
  assert.equal(await nb.cell('one', `print(alloc(${256 * MiB})[0])`), '2', 'past the quota: CUDA_ERROR_OUT_OF_MEMORY (2)');
  assert.equal(await nb.cell('two', `print(alloc(${200 * MiB})[0])`), '0', 'the second kernel allocates within its own quota');
  assert.equal(await nb.cell('one', `print(alloc(${64 * MiB})[0])`), '0', 'the first kernel goes on within its quota');
  await r.until('the refusal is an out-of-memory alert on the first kernel only', async () => {
    const alerts = (await r.engine.call('alerts.list', {})).filter((a) => a.kind === 'out-of-memory');
    return alerts.some((a) => a.jobId === jobOne.id) && !alerts.some((a) => a.jobId === jobTwo.id) ? alerts : undefined;
  });
  await nb.quit();
  assertLeftNothing(env, [one, two]);
});

test('an idle kernel with --auto-park is parked when a queued job needs its memory; its next cell runs after the restore with its device memory intact', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('park');
  const { env } = jupyterDirs({ 'gs-park': ['--auto-park'] });
  const nb = jupyter({ PATH: '/usr/bin:/bin', ...driver.env, ...env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000' });
  const pid = await nb.start('nb', 'gs-park');
  assert.equal(await nb.cell('nb', CUDA_CELL), 'ready');
  // 30 GiB held; a pattern written at its start and its end through the driver
  assert.equal(await nb.cell('nb', `rc, big = alloc(${30 * GiB})\npattern = bytes(range(256)) * 4096\nprint(rc, write(big, pattern), write(big + ${30 * GiB} - len(pattern), pattern))`), '0 0 0');
  const job = await r.until('the kernel enrolled', async () => enrolledOf(await r.engine.call('jobs.list', {}), pid));
  assert.notEqual(job.keepResident, true, '--auto-park: it may be parked');
  // a job that needs 30 GiB of the 40: only the idle kernel's memory can make room
  const other = await r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '30G', 'train', '--kernel-ms', '2', '--iterations', '20'], cwd: dir, gpu: 0, memoryRequestBytes: 30 * GiB });
  const parked = await r.until('the kernel was parked for it', async () => {
    const j = await r.job(job.id);
    return j?.history.some((h) => h.state === 'parked') ? j : undefined;
  }, 80);
  assert.match(parked.history.find((h) => h.state === 'parked')!.reason, new RegExp(`${other.id} is queued for 30G of GPU 0`));
  const trained = await r.until('the other job ran and finished', async () => {
    const j = await r.job(other.id);
    return j?.state === 'finished' || j?.state === 'failed' ? j : undefined;
  }, 120);
  assert.equal(trained.state, 'finished', JSON.stringify(trained.history));
  // the next cell: its first call waits in the driver until the engine restores the kernel's memory
  assert.equal(await nb.cell('nb', `rc1, a = read(big, len(pattern))\nrc2, b = read(big + ${30 * GiB} - len(pattern), len(pattern))\nprint(rc1, rc2, a == pattern, b == pattern)`), '0 0 True True');
  const after = (await r.job(job.id))!;
  const states = after.history.map((h) => h.state);
  assert.ok(states.indexOf('unparking') > states.indexOf('parked'), `restored after the park: ${JSON.stringify(after.history.map((h) => [h.state, h.reason]))}`);
  assert.equal(after.state, 'running');
  await nb.quit();
  assertLeftNothing(env, [pid]);
});
