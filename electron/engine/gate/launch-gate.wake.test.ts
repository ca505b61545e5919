// A best-effort job that waits for a high job's launched work (window policy 'learned') is woken when
// the high job's synchronise finds that work complete (a futex on its activity), instead of finding out
// at its next look, up to a whole sleep later while the GPU stands idle. Deterministic: asserts on the
// best-effort job's own gate timeline (GPUSHARE_GATE_TRACE) against the execution record, never on a latency.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import type { LaunchGate } from './launch-gate.js';
import { recordsOf, runProbe } from './testing/launch-gate-sim.js';
import { useGateRig } from './testing/gate-rig.js';

let driver: SimulatedDriver;
let gate: LaunchGate;
let dir: string;
const skip = useGateRig('gpushare-gate-wake-', { heartbeatIntervalMs: 200 }, (rig) => ({ driver, gate, dir } = rig));

const REQUESTS = 6; // fewer than the 8 gaps a hold is learned from: the 5 ms window, then the launched work, hold the trainer
/** A request: one 30 ms kernel, synchronised; then 20 ms of the program's own work. */
const requestSteps = (): string[] => ['launch:1:30000', 'sleep:20000'];

interface Span {
  kind: string;
  t0: number;
  t1: number;
}

const readTrace = (path: string): Span[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [kind, t0, t1] = l.split(' ');
      return { kind, t0: Number(t0), t1: Number(t1) };
    });

describe('best-effort woken by the high job going idle', { skip }, () => {
  test("a best-effort job waiting out a high job's 30 ms kernel is woken by the high job's synchronise: its wait spans the kernel's end", async () => {
    const high = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const be = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    const traceDir = join(dir, 'trace');
    mkdirSync(traceDir);
    const trainer = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '120'], { ...be.env, GPUSHARE_GATE_TRACE: traceDir });
    try {
      await trainer.ready;
      const probe = runProbe(driver, Array.from({ length: REQUESTS }, requestSteps).flat(), high.env);
      assert.equal(await probe.exited, 0, JSON.stringify(probe.steps.at(-1)));
      trainer.kill('SIGTERM'); // it exits normally: the library writes its timeline at exit
      assert.equal(await trainer.exited, 0);
      const h = recordsOf(await driver.execlog(0), probe.pid);
      assert.equal(h.length, REQUESTS);
      const spans = readTrace(join(traceDir, `trace-${trainer.pid}.txt`));
      // 'a': a wait for the high job's launched work that its going idle ended; 'A': one that timed out
      const woken = h.filter((k) => spans.some((s) => s.kind === 'a' && s.t0 < k.endNs && s.t1 >= k.endNs));
      assert.ok(
        woken.length >= REQUESTS / 2,
        `the trainer's wait across a high kernel's end was ended by the high job going idle for ${woken.length} of ${REQUESTS} kernels ` +
          `(its waits there: ${JSON.stringify(h.map((k) => spans.filter((s) => s.t0 < k.endNs && s.t1 >= k.endNs).map((s) => s.kind)))})`,
      );
      for (const s of spans.filter((x) => x.kind === 'a'))
        assert.ok(!h.some((k) => k.startNs <= s.t0 && s.t1 < k.endNs), `a wake inside a high kernel's run, none being done: ${JSON.stringify(s)}`);
    } finally {
      trainer.kill('SIGKILL');
      gate.releaseSlot(high.slot);
      gate.releaseSlot(be.slot);
    }
  });

  test("a waiting best-effort thread sleeps with a 1 µs timer slack (Linux's 50 µs default made short waits end late) and has its own back once it runs", async (t) => {
    const high = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const be = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    const trainer = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '120'], be.env);
    try {
      await trainer.ready;
      const slackFile = `/proc/${trainer.pid}/timerslack_ns`; // the launching (main) thread's
      if (!existsSync(slackFile)) return t.skip('no /proc/PID/timerslack_ns on this kernel (Linux < 4.6)');
      const slack = (): number => Number(readFileSync(slackFile, 'utf8'));
      const own = slack();
      const probe = runProbe(driver, ['launch:1:400000'], high.env); // one 400 ms kernel: the trainer waits meanwhile
      let ended = false;
      void probe.exited.then(() => (ended = true));
      const seen = new Set<number>();
      while (!ended && !seen.has(1000)) {
        seen.add(slack());
        await sleep(2);
      }
      assert.equal(await probe.exited, 0, JSON.stringify(probe.steps.at(-1)));
      assert.ok(seen.has(1000), `while the high kernel ran, the waiting trainer's slack read ${JSON.stringify([...seen])} ns, never 1000`);
      const firstAfter = (await driver.execlog(0)).filter((r) => r.pid === trainer.pid).length;
      while ((await driver.execlog(0)).filter((r) => r.pid === trainer.pid).length < firstAfter + 5) await sleep(5); // it runs again
      assert.equal(slack(), own, `its own slack (${own} ns) is back once it launches freely`);
    } finally {
      trainer.kill('SIGKILL');
      gate.releaseSlot(high.slot);
      gate.releaseSlot(be.slot);
    }
  });
});
