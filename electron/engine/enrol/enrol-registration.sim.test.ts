// `gpushare enrol` registrations outlive an engine restart: a command registered with one engine, whose
// first CUDA call comes under the next, joins a job with the options it registered. A registration whose
// process is gone is dropped. Over the simulated driver, through the real `gpushare enrol` command.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { CLI_ENV, CLI_PATH } from '../../cli/testing/compiled-cli.js';
import { ensurePreloadBuilt, preloadProbePath } from '../gate/testing/launch-gate-sim.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { listenOnSocket } from '../server/socket-server.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { REGISTRATIONS_FILE } from './registrations.js';

const MiB = 1024 ** 2;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-enrol-reg-', (rig) => ({ driver, nvml, dir } = rig));
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';

/** An engine named `name`: the same name is the same runtime directory, as a restarted engine has. */
async function engine(name: string, socketPath: string) {
  const r = schedulerRig({ driver, nvml, dir }, name, { gate: undefined }, cleanups); // its gate in its runtime dir
  await r.attached.ready;
  const server = await listenOnSocket(r.engine, socketPath);
  cleanups.push(() => server.close().catch(() => undefined));
  return { r, close: async () => (await server.close(), await r.stop()) };
}

/** `gpushare enrol OPTIONS -- bash -c SCRIPT`: SCRIPT starts once the command registered (the CLI runs it only then). */
function enrolCommand(socketPath: string, options: string[], script: string): { child: ChildProcess; lines: AsyncIterator<string> } {
  const env = { ...process.env, ...CLI_ENV, ...driver.env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000', GPUSHARE_PRELOAD_DEBUG: '1' };
  const child = spawn(process.execPath, [CLI_PATH, 'enrol', ...options, '--', 'bash', '-c', script], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  return { child, lines: createInterface({ input: child.stdout! })[Symbol.asyncIterator]() };
}

test('a command registered with `gpushare enrol` before an engine restart joins a job with its options under the next engine', { skip }, async () => {
  const socketPath = join(dir, 'restart.sock');
  const first = await engine('restart', socketPath);
  const probe = preloadProbePath();
  const { child, lines } = enrolCommand(socketPath, ['--priority', 'best-effort', '--mem', '512M'], `echo started; read go; "${probe}" alloc:${256 * MiB} alloc:${384 * MiB} sleep:60000000`);
  assert.equal((await lines.next()).value, 'started', 'registered, and its command runs');
  await first.close();

  const second = await engine('restart', socketPath);
  child.stdin!.write('go\n');
  const steps: Array<{ op: string; code?: number; pid?: number }> = [];
  while (steps.filter((s) => s.op === 'alloc').length < 2) {
    const line = (await lines.next()).value as string;
    if (line.startsWith('{')) steps.push(JSON.parse(line) as (typeof steps)[number]);
  }
  const pid = steps.find((s) => s.op === 'ready')!.pid!;
  const job = (await second.r.engine.call('jobs.list', {})).find((j) => j.enrolled && j.pid === pid);
  assert.ok(job, 'it enrolled');
  assert.deepEqual([job.enrolled!.by, job.priority, job.memoryQuotaBytes], ['command', 'best-effort', 512 * MiB], 'with the options it registered before the restart');
  assert.deepEqual(steps.filter((s) => s.op === 'alloc').map((s) => s.code), [0, 2], 'its quota holds: the second allocation passes 512M');
});

test('a registration whose process is gone is dropped when the next engine starts', { skip }, async () => {
  const socketPath = join(dir, 'gone.sock');
  const first = await engine('gone', socketPath);
  const path = join(dir, 'gone', 'run', REGISTRATIONS_FILE);
  const { child, lines } = enrolCommand(socketPath, ['--priority', 'best-effort'], 'echo started; read go');
  assert.equal((await lines.next()).value, 'started');
  const kept = JSON.parse(readFileSync(path, 'utf8')) as { registrations: Array<{ pid: number }> };
  assert.deepEqual(kept.registrations.map((r) => r.pid), [child.pid], 'kept on disk while its command runs');
  await first.close();
  child.stdin!.write('go\n');
  await new Promise((resolve) => child.once('close', resolve));
  const second = await engine('gone', socketPath);
  assert.ok(existsSync(path));
  assert.deepEqual((JSON.parse(readFileSync(path, 'utf8')) as typeof kept).registrations, [], 'its process ended while no engine ran: dropped');
  await second.close();
});
