// The fit rule says not only that a best-effort kernel would likely not end before an idle high job's
// next launch, but from which idle age it would (native/preload/src/gate_learned.c, fit_again): the
// waiter sleeps until then instead of a whole backoff step past it. Deterministic: fixed gap histograms
// through the library's own code (native/preload/test/gate_fit.c), no clock in the answer.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensurePreloadBuilt, preloadBuildDir } from './testing/launch-gate-sim.js';

interface FitCase {
  case: string;
  unfit: number;
  fitAgeNs: number; // -1: no fit within the lookahead (or not unfit)
  unfitStepBefore: number;
  unfitAt: number;
  stepNs: number;
  lookaheadNs: number;
}

const program = join(preloadBuildDir(), 'gate_fit');
const skip = !ensurePreloadBuilt() || !existsSync(program) ? 'native/preload/build/gate_fit is not built (make -C native/preload)' : false;

test('the fit rule gives the idle age from which a held best-effort kernel fits: one step past the quick relaunches, none when no gap outlasts the kernel', { skip }, () => {
  const cases = new Map(
    execFileSync(program, { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as FitCase)
      .map((c) => [c.case, c]),
  );
  const quick = cases.get('quick-relaunch-8us')!;
  assert.equal(quick.unfit, 1, '8 µs into the gap, a 1.06 ms kernel is held: most gaps that lasted 8 µs are quick relaunches ending within 16 µs');
  assert.ok(quick.fitAgeNs > 8000 && quick.fitAgeNs <= 16384 + quick.stepNs, `it fits from the end of the quick relaunches' octave (16.4 µs), within one step: ${quick.fitAgeNs} ns`);
  assert.equal(quick.unfitAt, 0, 'at the age given it fits');
  assert.equal(quick.unfitStepBefore, 1, 'one step earlier it did not: the first such age');
  assert.equal(cases.get('quick-relaunch-40us')!.unfit, 0, 'past the quick relaunches it is let in (the Poisson gaps mostly outlast it)');
  const never = cases.get('gaps-shorter-than-kernel')!;
  assert.equal(never.unfit, 1, 'every gap shorter than the kernel: held');
  assert.equal(never.fitAgeNs, -1, `no fit within the ${never.lookaheadNs / 1000} µs lookahead: the waiter keeps its backoff`);
});
