// The preload library's memory accounting follows the driver: VMM memory lives
// until its last unmap, arrays and graph memory count, a destroyed or reset
// context gives its allocations back. On the simulated driver, which frees
// and charges as the real one does; asserts on result codes and bytes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { LaunchGate } from './launch-gate.js';
import { runProbe } from './testing/launch-gate-sim.js';
import { useGateRig } from './testing/gate-rig.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
let driver: SimulatedDriver;
let gate: LaunchGate;
const skip = useGateRig('gpushare-gate-acct-', { heartbeatIntervalMs: 200 }, (rig) => ({ driver, gate } = rig));

/** Runs the probe's steps under a job with `quota`; returns "op:code" per step and the slot's used bytes at the end. */
async function steps(quota: number, list: string[]): Promise<{ codes: string[]; usedBytes: number }> {
  const { slot, env } = gate.allocateSlot({ gpu: 0, priority: 'normal', quotaBytes: quota });
  try {
    const probe = runProbe(driver, [...list, 'wait'], env);
    for (let i = 0; i <= list.length; i++) await probe.next(); // ready, then one line per step (`wait` answers after the resume)
    const usedBytes = gate.readSlot(slot).usedBytes;
    probe.resume();
    assert.equal(await probe.exited, 0);
    const codes = probe.steps.filter((s) => !['ready', 'done', 'wait'].includes(s.op)).map((s) => `${s.op}:${String(s.code)}`);
    return { codes, usedBytes };
  } finally {
    gate.releaseSlot(slot);
  }
}

describe('memory accounting follows the driver', { skip }, () => {
  test('VMM: a handle released while mapped counts until its last unmap', async () => {
    const r = await steps(512 * MiB, [`vmm:${256 * MiB}`, 'map:0', 'free:0', `alloc:${512 * MiB}`, 'unmap:0', `alloc:${512 * MiB}`]);
    assert.deepEqual(r.codes, ['vmm:0', 'map:0', 'free:0', 'alloc:2', 'unmap:0', 'alloc:0']);
    assert.equal(r.usedBytes, 512 * MiB);
  });

  test('VMM: released and never mapped, the bytes come back at the release', async () => {
    const r = await steps(512 * MiB, [`vmm:${256 * MiB}`, `vmm:${256 * MiB}`, 'map:1', 'unmap:1', 'free:0', 'free:1', `alloc:${512 * MiB}`]);
    assert.deepEqual(r.codes, ['vmm:0', 'vmm:0', 'map:0', 'unmap:0', 'free:0', 'free:0', 'alloc:0']);
  });

  test('cuArray and cuMipmappedArray allocations count against the quota and come back when destroyed', async () => {
    const r = await steps(512 * MiB, [`array:${256 * MiB}`, `mipmap:${256 * MiB}`, `mipmap:${128 * MiB}`, 'alloc:4', 'free:0', `alloc:${256 * MiB}`]);
    // 256 MiB array + a 2-level mipmap of 256 MiB (384 MiB) would pass 512 MiB; one of 128 MiB (192 MiB) fits, then 64 MiB are left
    assert.deepEqual(r.codes, ['array:0', 'mipmap:2', 'mipmap:0', 'alloc:0', 'free:0', 'alloc:0']);
    assert.equal(r.usedBytes, 192 * MiB + 4 + 256 * MiB);
  });

  test('after cuCtxDestroy, a fresh allocation under the quota is accepted (the context’s bytes came back)', async () => {
    const r = await steps(GiB, ['ctxnew', ...Array(4).fill(`alloc:${256 * MiB}`), 'ctxdestroy', `alloc:${512 * MiB}`]);
    assert.deepEqual(r.codes, ['ctxnew:0', 'alloc:0', 'alloc:0', 'alloc:0', 'alloc:0', 'ctxdestroy:0', 'alloc:0']);
    assert.equal(r.usedBytes, 512 * MiB);
  });

  test('after cuDevicePrimaryCtxReset, the primary context’s bytes are given back', async () => {
    const r = await steps(GiB, [`alloc:${512 * MiB}`, `alloc:${512 * MiB}`, 'reset', `alloc:${GiB}`]);
    assert.deepEqual(r.codes, ['alloc:0', 'alloc:0', 'reset:0', 'alloc:0']);
    assert.equal(r.usedBytes, GiB);
  });

  test('graph memory counts from the graph’s first launch, not while capturing; over the quota that launch is out of memory', async () => {
    const fits = gate.allocateSlot({ gpu: 0, priority: 'normal', quotaBytes: GiB });
    const over = gate.allocateSlot({ gpu: 0, priority: 'normal', quotaBytes: GiB });
    try {
      const capture = ['capture', '--kernels', '4', '--kernel-ms', '0', '--launches', '2', '--graph-mem', '768M'];
      const ok = driver.spawnFakejob(capture, fits.env);
      assert.equal(await ok.exited, 0, JSON.stringify(ok.events.at(-1)));
      assert.equal(ok.events.find((e) => e.event === 'captured')!.end, 'CUDA_SUCCESS');
      const launched = ok.events.find((e) => e.event === 'graph')!;
      assert.deepEqual([launched.total, launched.free], [GiB, 256 * MiB], 'the launched graph holds its 768 MiB');
      const refused = driver.spawnFakejob(['--mem', '512M', ...capture], over.env);
      await refused.exited;
      assert.equal(refused.events.find((e) => e.event === 'captured')?.end, 'CUDA_SUCCESS', 'capturing charges nothing');
      assert.match(JSON.stringify(refused.events.at(-1)), /cuGraphLaunch.*OUT_OF_MEMORY|OUT_OF_MEMORY.*cuGraphLaunch/);
      assert.equal(gate.readSlot(over.slot).oomCount, 1);
    } finally {
      gate.releaseSlot(fits.slot);
      gate.releaseSlot(over.slot);
    }
  });
});
