// The device kit's dry run: built as `npm run device-kit` builds it, under its size limit, and its
// device/check run against the simulated driver, so the kit is whole on the day a GPU is lent.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { buildKit, KIT_LIMIT_BYTES } from './build-kit.js';

const work = mkdtempSync(join(tmpdir(), 'gpushare-kit-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** Processes whose environment names this kit's check marks: none may outlive device/check. */
function markedProcesses(): string[] {
  const left: string[] = [];
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`GPUSHARE_KIT_MARK=`)) left.push(pid);
    } catch {
      // gone, or not ours
    }
  }
  return left;
}

test('the device kit builds under its size limit and its dry run runs every check that needs no real GPU', { timeout: 600_000 }, () => {
  const kit = buildKit(join(work, 'kit'));
  assert.ok(kit.bytes <= KIT_LIMIT_BYTES, `kit is ${kit.bytes} bytes`);
  for (const part of ['device/check', 'device/node.xz', 'device/kit.json', 'device/app/native/nvml/build/Release/gpushare_nvml.node', 'device/app/native/preload/build/libgpushare-preload.so', 'device/checks/quota.py']) {
    assert.ok(existsSync(join(kit.dir, part)), `the kit holds ${part}`);
  }
  console.log(`device kit: ${(kit.bytes / 2 ** 20).toFixed(1)} MiB in ${kit.files} files, node ${kit.nodeVersion}`);

  const out = join(work, 'results');
  // from a copy outside the checkout: the kit must not lean on the checkout's files
  const ran = spawnSync(join(kit.dir, 'device', 'check'), [out, '--simulate'], { encoding: 'utf8', timeout: 540_000, env: { ...process.env, PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
  console.log(ran.stdout.split('device kit summary')[1] ? `device kit summary${ran.stdout.split('device kit summary')[1]}` : ran.stdout + ran.stderr);
  assert.equal(ran.status, 0, `device/check --simulate exited ${ran.status}:\n${ran.stdout}\n${ran.stderr}`);
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { simulated: boolean; checks: Array<{ name: string; status: string; reason?: string; lines?: string[] }> };
  assert.equal(results.simulated, true);
  const by = Object.fromEntries(results.checks.map((c) => [c.name, c]));
  assert.deepEqual(Object.keys(by).sort(), ['capture', 'gate', 'launch-cost', 'park', 'quota', 'seeing']);
  // run here: the addon opens the simulated driver; the launch bench runs with and without the library and a gate slot; the engine starts a job
  assert.match(by.seeing.reason ?? '', /nvidia-smi.*the addon opened and sampled 1 GPU/);
  assert.equal(by['launch-cost'].status, 'passed', by['launch-cost'].reason);
  assert.match(by['launch-cost'].lines?.[0] ?? '', /no preload [\d.]+, preload [\d.]+ .*high slot .* [\d.]+/);
  assert.match(by.quota.lines?.[0] ?? '', /engine answers; gpushare run -- \/bin\/true: j1 finished: exit code 0/);
  // said, not run: what needs PyTorch with CUDA or nvidia-smi
  for (const name of ['quota', 'park', 'capture', 'gate']) {
    assert.equal(by[name].status, 'skipped', name);
    assert.match(by[name].reason ?? '', /PyTorch/, name);
  }
  assert.match(readFileSync(join(out, 'summary.txt'), 'utf8'), /^passed {2}launch-cost/m);
  assert.deepEqual(markedProcesses(), [], 'device/check left none of its processes behind');
});
