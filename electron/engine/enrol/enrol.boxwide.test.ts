// The box-wide route end to end: a CUDA program that loads the library only through /etc/ld.so.preload (a
// private mount namespace's, electron/engine/testing/preload-namespace.ts; no LD_PRELOAD anywhere) enrols at
// its first CUDA call on the simulated driver; with the admin's kill switch (/etc/gpushare/preload-off)
// present in that namespace the same program runs on untouched and nothing enrols.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { planPreloadAll } from '../../cli/commands/preload-all.js';
import { ensurePreloadBuilt, preloadProbePath } from '../gate/testing/launch-gate-sim.js';
import { preloadLibraryPath } from '../gate/launch-gate.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { inPreloadNamespace, preloadNamespaceUnavailable } from '../testing/preload-namespace.js';
import { socketSchedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';

const MiB = 1024 ** 2;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-enrol-boxwide-', (rig) => ({ driver, nvml, dir } = rig));
const skip = preloadNamespaceUnavailable() ?? (ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)');

const engineWithSocket = (name: string) => socketSchedulerRig({ driver, nvml, dir }, name, {}, cleanups);

/** A monitor such as nvidia-smi: NVML only (memory info), never the CUDA driver; then it sleeps. */
const NVML_MONITOR = [
  '/usr/bin/python3',
  '-c',
  `import ctypes, json, os, sys, time
nvml = ctypes.CDLL("libnvidia-ml.so.1")
h = ctypes.c_void_p()
mem = (ctypes.c_ulonglong * 3)()
rc = [nvml.nvmlInit_v2(), nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)), nvml.nvmlDeviceGetMemoryInfo(h, mem)]
print(json.dumps({"pid": os.getpid()}))
print(json.dumps({"code": max(rc), "total": mem[0]}), flush=True)
time.sleep(600)`,
];

/** The probe (allocates, then sleeps) in the namespace; its JSON lines in order. */
function probeInNamespace(socketPath: string, killSwitch: boolean, argv = [preloadProbePath(), `alloc:${64 * MiB}`, 'sleep:60000000']): { child: ChildProcess; next(): Promise<Record<string, unknown>>; stderr(): string } {
  const work = mkdtempSync(join(dir, 'ns-'));
  const preloadFile = join(work, 'ld.so.preload');
  writeFileSync(preloadFile, planPreloadAll(null, preloadLibraryPath(), true).text!);
  const ns = inPreloadNamespace({ preloadFile, work, killSwitch }, argv);
  const env = { PATH: '/usr/bin:/bin', ...driver.env, ...ns.env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000', GPUSHARE_PRELOAD_DEBUG: '1' }; // the engine shares this busy test process
  assert.equal(Object.keys(env).includes('LD_PRELOAD'), false);
  // started by a shell, as a user's program is: the engine's own children are never enrolled
  const child = spawn('/bin/sh', ['-c', '"$@" & wait', 'sh', ns.file, ...ns.args], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  cleanups.push(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
    rmSync(work, { recursive: true, force: true });
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiting: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    waiting.splice(0).forEach((w) => w());
  });
  let read = 0;
  const next = async (): Promise<Record<string, unknown>> => {
    while (read >= lines.length) await new Promise<void>((resolve) => waiting.push(resolve));
    return lines[read++];
  };
  return { child, next, stderr: () => stderr };
}

const enrolledPid = (jobs: JobView[], pid: number): JobView | undefined => jobs.find((j) => j.enrolled && j.pid === pid);

test('a CUDA program loading the library only through /etc/ld.so.preload enrols at its first CUDA call', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('boxwide');
  const probe = probeInNamespace(socketPath, false);
  const ready = await probe.next();
  const alloc = await probe.next();
  assert.equal(alloc.code, 0, `it allocates: ${JSON.stringify(alloc)}`);
  const pid = Number(ready.pid);
  const job = await r.until('the probe enrolled', async () => enrolledPid(await r.engine.call('jobs.list', {}), pid));
  assert.ok(job.managed, `an ordinary managed job: ${JSON.stringify(job.enrolled)}`);
  assert.match(probe.stderr(), /enrolled as j\d+/, 'the library says so (GPUSHARE_PRELOAD_DEBUG=1)');
});

test('with the kill switch /etc/gpushare/preload-off present, the same program runs untouched and nothing enrols', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('killed');
  const probe = probeInNamespace(socketPath, true);
  const ready = await probe.next();
  const alloc = await probe.next();
  assert.equal(alloc.code, 0, `it allocates: ${JSON.stringify(alloc)}`);
  // its first CUDA call is over (the alloc answered): an enrolment would have been asked and answered by now
  for (let i = 0; i < 3; i++) await r.tick();
  const jobs = await r.engine.call('jobs.list', {});
  assert.deepEqual(jobs.filter((j) => j.enrolled), [], 'no enrolled job');
  assert.equal(enrolledPid(jobs, Number(ready.pid)), undefined);
  assert.match(probe.stderr(), /not enrolled: the administrator's kill switch \/etc\/gpushare\/preload-off is present/, 'and says why (GPUSHARE_PRELOAD_DEBUG=1)');
});

test('a monitor that uses NVML only (as nvidia-smi does) is not enrolled: the CUDA driver is never used there', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('monitor');
  const monitor = probeInNamespace(socketPath, false, NVML_MONITOR);
  const ready = await monitor.next();
  const info = await monitor.next();
  assert.equal(info.code, 0, `NVML answers: ${JSON.stringify(info)}`);
  assert.equal(info.total, 40 * 1024 ** 3, 'the whole GPU, as without the library');
  for (let i = 0; i < 3; i++) await r.tick();
  const jobs = await r.engine.call('jobs.list', {});
  assert.deepEqual(jobs.filter((j) => j.enrolled), [], `no enrolled job for pid ${ready.pid}`);
  assert.doesNotMatch(monitor.stderr(), /enrol/, 'nor asked to be');
});
