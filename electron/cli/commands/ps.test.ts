// `gpushare ps` as a user runs it: the built command, on the simulated driver.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Snapshot } from '../../../shared/snapshot.js';
import { cliRig } from '../testing/cli-rig.js';
import { CLI_ENV, CLI_PATH } from '../testing/compiled-cli.js';
import { fakegpuBuildDir } from '../../engine/paths.js';

const runtime = mkdtempSync(join(tmpdir(), 'gpushare-ps-'));
after(() => rmSync(runtime, { recursive: true, force: true }));

// this tree's CLI; no box daemon, no personal engine, no simulated box pointed at: ps opens the driver itself
const baseEnv: NodeJS.ProcessEnv = { ...process.env, ...CLI_ENV, XDG_RUNTIME_DIR: runtime, GPUSHARE_DAEMON_SOCKET: join(runtime, 'no-daemon.sock'), GPUSHARE_NVML_LIB: '/nonexistent/libnvidia-ml.so.1' };
delete baseEnv.GPUSHARE_FAKEGPU_STATE;

function gpushare(args: string[], env: NodeJS.ProcessEnv = baseEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_PATH, ...args],
      { env },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('ps --simulate --json prints one snapshot of the simulated box', async () => {
  const { code, stdout, stderr } = await gpushare(['ps', '--simulate', 'h100x2-mig', '--json']);
  assert.equal(code, 0, stderr);
  const snap = JSON.parse(stdout) as Snapshot;
  assert.equal(snap.driver.simulated, true);
  assert.equal(snap.driver.scenario, 'h100x2-mig');
  assert.equal(snap.gpus.length, 2);
  assert.equal(snap.gpus[1].migEnabled, true);
  assert.deepEqual(snap.gpus[1].migSlices.map((s) => s.profileName).sort(), ['1g.10gb', '1g.10gb', '2g.20gb', '3g.40gb']);
});

test('ps --simulate says plainly that the GPUs are simulated', async () => {
  const { code, stdout } = await gpushare(['ps', '--simulate', 'a100-40gb']);
  assert.equal(code, 0);
  assert.match(stdout, /^SIMULATED GPUs \(scenario a100-40gb\)/);
  assert.match(stdout, /NVIDIA A100-SXM4-40GB/);
  assert.match(stdout, /No GPU processes\.|PID/);
});

/** The parent of a pid (field 4 of /proc/PID/stat, after the command's parenthesis); null once it is gone. */
function parentOf(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  } catch {
    return null;
  }
}

/** The environment after `eval "$(gpushare sim env --scenario NAME)"`. */
async function simEnv(scenario: string): Promise<NodeJS.ProcessEnv> {
  const { code, stdout, stderr } = await gpushare(['sim', 'env', '--scenario', scenario]);
  assert.equal(code, 0, stderr);
  const env = { ...baseEnv };
  for (const [, key, value] of stdout.matchAll(/^export (\w+)='([^']*)'$/gm)) env[key] = value;
  return env;
}

test('ps --simulate without a scenario shows the box `sim env` pointed the shell at, with a fakejob started there', async () => {
  const env = await simEnv('a100-40gb');
  const job = spawn(join(fakegpuBuildDir(), 'fakejob'), ['--mem', '1G', 'hold', '--duration', '30'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      job.stdout!.on('data', (d: Buffer) => (out += d.toString()).includes('"ready"') && resolve());
      job.once('exit', (code) => reject(new Error(`fakejob exited (${code}) before it was ready: ${out}`)));
    });
    const { code, stdout, stderr } = await gpushare(['ps', '--simulate', '--json'], env);
    assert.equal(code, 0, stderr);
    const snap = JSON.parse(stdout) as Snapshot;
    assert.equal(snap.driver.scenario, 'a100-40gb', 'the box the shell points at, not the default one');
    assert.ok(snap.processes.some((p) => p.pid === job.pid), `fakejob ${job.pid} is in the box: ${snap.processes.map((p) => p.pid).join(', ')}`);
    const named = await gpushare(['ps', '--simulate', 'h100x2-mig', '--json'], env);
    assert.equal((JSON.parse(named.stdout) as Snapshot).driver.scenario, 'h100x2-mig', 'a scenario named on the command line wins');
  } finally {
    const exited = new Promise((resolve) => job.once('exit', resolve));
    job.kill('SIGKILL');
    await exited; // reaped: the next test's box holds none of this one's processes
  }
});

test('sim fakejob and sim reset without a scenario act on the box `sim env` pointed the shell at', async () => {
  const env = await simEnv('a100-40gb');
  const job = spawn(process.execPath, [CLI_PATH, 'sim', 'fakejob', '--', '--mem', '1G', 'hold', '--duration', '30'], { env, stdio: ['ignore', 'pipe', 'inherit'], detached: true }); // its own group: the fakejob goes with it
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      job.stdout!.on('data', (d: Buffer) => (out += d.toString()).includes('"ready"') && resolve());
      job.once('exit', (code) => reject(new Error(`sim fakejob exited (${code}) before it was ready: ${out}`)));
    });
    const seen = JSON.parse((await gpushare(['ps', '--simulate', 'a100-40gb', '--json'], env)).stdout) as Snapshot;
    const started = seen.processes.find((p) => parentOf(p.pid) === job.pid);
    assert.ok(started, `the fakejob sim fakejob started is in the a100-40gb box: ${JSON.stringify(seen.processes)}`);
    const exited = new Promise((resolve) => job.once('exit', resolve));
    process.kill(started.pid, 'SIGKILL'); // the fakejob itself: sim fakejob then ends with its status
    assert.equal(await exited, 128 + 9);
    const reset = await gpushare(['sim', 'reset'], env);
    assert.equal(reset.code, 0, reset.stderr);
    assert.match(reset.stdout, /"a100-40gb" starts afresh/);
    const after = JSON.parse((await gpushare(['ps', '--simulate', '--json'], env)).stdout) as Snapshot;
    assert.deepEqual(after.processes, [], 'the pointed box was the one reset');
  } finally {
    try {
      process.kill(-job.pid!, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }
});

test('ps without a driver names GPUSHARE_NVML_LIB and suggests --simulate', async () => {
  const { code, stderr } = await gpushare(['ps']);
  assert.equal(code, 1);
  assert.match(stderr, /GPUSHARE_NVML_LIB/);
  assert.match(stderr, /gpushare ps --simulate/);
});

test('bad input gets a clear error and exit code 2', async () => {
  const unknownScenario = await gpushare(['ps', '--simulate', 'v100x4']);
  assert.equal(unknownScenario.code, 1);
  assert.match(unknownScenario.stderr, /Unknown simulated GPU scenario "v100x4"/);
  const badRate = await gpushare(['ps', '--watch', '--rate', '50', '--simulate']);
  assert.match(badRate.stderr, /between 0.2 and 10 Hz, got 50/);
  const badFlag = await gpushare(['ps', '--colour']);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /--colour/);
});

test('ps asks the running engine when there is one: the console on simulated GPUs, with no NVIDIA driver here', async () => {
  const rig = cliRig('ps-engine');
  try {
    await rig.serve(); // gpushare serve --simulate a100-40gb
    const noDriver = { GPUSHARE_NVML_LIB: '/nonexistent/libnvidia-ml.so.1' };
    const json = await rig.gpushare(['ps', '--json'], noDriver);
    assert.equal(json.code, 0, json.stderr);
    const snap = JSON.parse(json.stdout) as Snapshot;
    assert.equal(snap.driver.simulated, true);
    assert.equal(snap.driver.scenario, 'a100-40gb', "the engine's box, not a driver of ps's own");
    const text = await rig.gpushare(['ps'], noDriver);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^SIMULATED GPUs \(scenario a100-40gb\)/);
    assert.match(text.stdout, /NVIDIA A100-SXM4-40GB/);
  } finally {
    rig.dispose();
  }
});
