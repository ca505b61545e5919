// `--metrics` on the commands that host an engine: a bad value is a usage error before anything
// starts; `gpushare serve --metrics` serves them and prints where; a port in use stops the start.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CLI_ENV, CLI_PATH } from './testing/compiled-cli.js';

const home = mkdtempSync(join(tmpdir(), 'gpushare-metrics-cli-'));
const env: NodeJS.ProcessEnv = { ...process.env, ...CLI_ENV, XDG_RUNTIME_DIR: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data'), GPUSHARE_DAEMON_SOCKET: join(home, 'no-daemon.sock') };
delete env.GPUSHARE_SOCKET; // the engines started here use their user's default place under XDG_RUNTIME_DIR
after(() => rmSync(home, { recursive: true, force: true }));

function gpushare(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args], { env, cwd: home, timeout: 60_000 }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

test('a bad --metrics value is a usage error (exit 2) naming it, on serve, start, engine and daemon', async () => {
  for (const command of [['serve'], ['start', '--browser'], ['engine'], ['daemon']]) {
    const result = await gpushare([...command, '--simulate', '--metrics', 'metrics.example:9400']);
    assert.equal(result.code, 2, `${command[0]}: ${result.stderr}`);
    assert.match(result.stderr, /--metrics "metrics\.example:9400": "metrics\.example" is not an IP address/, command[0]);
  }
  const bare = await gpushare(['serve', '--metrics']);
  assert.equal(bare.code, 2, bare.stderr);
});

test('gpushare serve --metrics serves the metrics at the printed URL until it stops', { timeout: 60_000 }, async () => {
  const engine = spawn(process.execPath, [CLI_PATH, 'serve', '--simulate', 'a100-40gb', '--metrics', '127.0.0.1:0', '--db', join(home, 'serve.db')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => engine.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    engine.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const match = /^metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)$/m.exec(output);
      if (match && output.includes('engine socket:')) resolve(match[1]);
    });
    engine.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    void exited.then((code) => reject(new Error(`gpushare serve exited (${code}): ${output}`)));
  });
  try {
    const text = await (await fetch(url)).text();
    assert.match(text, /^gpushare_gpu_info\{gpu="0",uuid="GPU-[^"]+",name="NVIDIA A100[^"]*",pci_bus_id="[^"]+"\} 1$/m);
    assert.match(text, /^gpushare_engine_info\{box="[^"]+",kind="personal",simulated="true",/m);
  } finally {
    engine.kill('SIGTERM');
  }
  assert.equal(await exited, 0);
  await assert.rejects(fetch(url), 'the endpoint closes with the engine');
});

test('a --metrics port in use stops gpushare engine before its socket answers, saying so', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as AddressInfo;
  try {
    const result = await gpushare(['engine', '--simulate', 'a100-40gb', '--no-demo', '--metrics', String(port)]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, new RegExp(`The metrics endpoint cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use\\.`));
    assert.doesNotMatch(result.stdout, /engine socket:/, 'it never said it answers');
    assert.equal(existsSync(join(home, 'gpushare', 'engine.sock')), false, 'no socket left behind');
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});
