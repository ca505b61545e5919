// The simulated driver's own self-test (native/fakegpu/test/selftest.sh) as part of the
// suite: the CLI, fakejob, the fake NVML and the CUDA driver-API checks (capture, graphs,
// graph memory, arrays, VMM, contexts, the bounded launch queue, the checkpoint lock, memory contents).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../paths.js';

interface Run {
  code: number | null;
  output: string;
}

function runSelftest(): Promise<Run> {
  const script = join(packageRoot(), 'native', 'fakegpu', 'test', 'selftest.sh');
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.GPUSHARE_FAKEGPU_STATE; // the self-test makes its own state file
    delete env.CUDA_VISIBLE_DEVICES;
    const child = spawn('bash', [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('the simulated driver passes its self-test, CUDA driver-API checks included', { timeout: 300_000 }, async () => {
  const { code, output } = await runSelftest();
  const failures = output.split('\n').filter((l) => l.startsWith('FAIL'));
  assert.equal(code, 0, `selftest.sh exited ${code}; failures:\n${failures.join('\n')}\n--- output ---\n${output}`);
  for (const check of ['capture', 'graphmem', 'arrays', 'vmm', 'ctx', 'queue', 'ckpt', 'contents', 'copy2d', 'memset2d', 'batch', 'arraycopy']) {
    assert.match(output, new RegExp(`^ok   cuda ${check} \\(\\d+ checks\\)$`, 'm'), `the "${check}" checks did not run`);
  }
  assert.match(output, /^== 0 failure\(s\)$/m);
});
