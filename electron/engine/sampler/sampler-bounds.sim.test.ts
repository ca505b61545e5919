// What the sampler copies from /proc has a size bound, whatever a GPU process's command line and environment hold:
// GPU processes on the simulated driver with multi-megabyte argument lists and environments (finding 8 of issue 24).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { Sampler } from './sampler.js';
import { fakegpuBuildDir } from '../paths.js';
import { useSimulatedRig, type SimulatedRig } from '../testing/simulated-rig.js';
import { paddedExec, type Padding } from '../testing/padded-exec.js';

let box: SimulatedRig;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-sampler-bounds-', (rig) => (box = rig));

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
const MB = 1024 * 1024;

/** A fakejob holding 1 MB on the GPU behind a padded command line or environment; resolves once it holds it. */
async function paddedFakejob(extraArgs: string[], padding: Padding): Promise<ChildProcess> {
  const { argv, env } = paddedExec([`${fakegpuBuildDir()}/fakejob`, '--mem', '1M', 'hold', '--', ...extraArgs], padding);
  const child = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...box.driver.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    }
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`padded fakejob exited (${code}): ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => line.includes('"event":"ready"') && resolve());
  });
  return child;
}

/** The whole command line as the kernel has it: its bytes and its arguments. */
function cmdlineOf(pid: number): { bytes: number; args: number } {
  const raw = readFileSync(`/proc/${pid}/cmdline`);
  return { bytes: raw.length, args: raw.filter((b) => b === 0).length };
}

test('a GPU process with a 5.5 MB command line or environment costs the snapshot a few KB: its command line cut, with its full length noted', async (t) => {
  const sampler = new Sampler(box.nvml, { simulated: true, scenario: box.driver.scenario });
  const wide = await paddedFakejob([], { argBytes: 5.5 * MB });
  const controls = await paddedFakejob([], { argBytes: 5.5 * MB, fill: '\x01' }); // JSON writes each as \u0001: 33 MB
  const notebook = await paddedFakejob(['-f', '/run/user/1000/jupyter/kernel-4f1c2a.json'], {
    envBytes: 5.5 * MB,
    envAfter: { SSH_CONNECTION: `10.0.0.7 52144 ${'9'.repeat(100_000)} 22`, SSH_TTY: '/dev/pts/3', JPY_SESSION_NAME: 'n'.repeat(100_000) },
  });
  const snapshot = sampler.tick();
  const total = jsonBytes(snapshot);
  t.diagnostic(`snapshot of three padded GPU processes: ${total} bytes of JSON`);
  const row = (child: ChildProcess) => {
    const found = snapshot.processes.find((p) => p.pid === child.pid);
    assert.ok(found, `pid ${child.pid} listed`);
    return found;
  };

  for (const child of [wide, controls]) {
    const p = row(child);
    const whole = cmdlineOf(child.pid!);
    assert.ok(whole.bytes > 5 * MB, `the process really has ${whole.bytes} bytes of command line`);
    assert.ok(jsonBytes(p.argv) <= 4096, `argv shown in at most 4 KB of JSON, not ${jsonBytes(p.argv)}`);
    assert.deepEqual(p.argv.slice(0, 5), [`${fakegpuBuildDir()}/fakejob`, '--mem', '1M', 'hold', '--'], 'the start of the command line is shown as it is');
    assert.deepEqual(p.argvCut, whole, 'the whole command line\'s size is noted');
    assert.equal(p.command, 'fakejob');
    assert.ok(jsonBytes(p) <= 8192, `one process's row is at most 8 KB of JSON, not ${jsonBytes(p)}`);
  }

  const n = row(notebook);
  assert.ok(readFileSync(`/proc/${notebook.pid}/environ`).length > 5 * MB, 'the environment really is 5.5 MB');
  assert.equal(n.argvCut ?? null, null, 'a short command line is whole');
  assert.deepEqual(n.argv.slice(-2), ['-f', '/run/user/1000/jupyter/kernel-4f1c2a.json']);
  // variables after 5.5 MB of environment are still found, each cut to a line's worth
  assert.equal(n.context?.jupyterKernel?.id, '4f1c2a');
  assert.ok(n.context?.jupyterKernel?.notebook?.startsWith('nnnn'), 'the notebook name is read');
  assert.ok(n.context!.jupyterKernel!.notebook!.length <= 256, `the notebook name is cut to 256 characters, not ${n.context!.jupyterKernel!.notebook!.length}`);
  assert.ok(n.context?.sshSession?.startsWith('10.0.0.7:52144'), 'the ssh session is read');
  assert.ok(n.context!.sshSession!.length <= 256, `the ssh session is cut to 256 characters, not ${n.context!.sshSession!.length}`);
  assert.ok(jsonBytes(n) <= 8192, `one process's row is at most 8 KB of JSON, not ${jsonBytes(n)}`);

  assert.ok(total <= 64 * 1024, `the snapshot of three padded processes is at most 64 KB of JSON, not ${total}`);
});
