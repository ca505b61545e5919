// The control loop's one way in: requestEvaluation. A step never runs inside another; requests made
// during a step run exactly one more step after it; commands' requests share one step.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import type { ApiEvents } from '../../../shared/api.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import { EventBus } from '../event-bus.js';
import { Freezer } from '../holds/freezer.js';
import { ProcessControl } from '../holds/process-control.js';
import { COMMAND_EVALUATION_MS, Scheduler } from './scheduler.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-loop-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const snapshot: Snapshot = {
  seq: 1,
  takenAt: Date.now(),
  intervalMs: null,
  nominalIntervalMs: 1000,
  driver: { driverVersion: 'test', nvmlVersion: 'test', cudaDriverVersion: null, simulated: true, scenario: null },
  gpus: [],
  processes: [],
};

/** A scheduler on a box with no GPU; `duringStep` runs inside every step (where it publishes its conditions). */
function loop(duringStep: (scheduler: Scheduler, depth: number) => void) {
  let depth = 0;
  let deepest = 0;
  const control = new ProcessControl();
  const scheduler: Scheduler = new Scheduler({
    engine: {
      sampler: { latest: snapshot, sampleNow: () => snapshot } as never,
      events: new EventBus<ApiEvents>(),
      raiseAlert: (() => undefined) as never,
      setConditions: () => {
        depth++;
        deepest = Math.max(deepest, depth);
        try {
          duringStep(scheduler, depth);
        } finally {
          depth--;
        }
      },
    },
    control,
    freezer: new Freezer({ recordPath: join(dir, `suspended-${Math.random()}.json`), control, guardian: false }),
    gate: null,
    logDir: join(dir, 'logs'),
  });
  return { scheduler, deepest: () => deepest };
}

test('requests made during a step run one more step after it, never one inside it', async (t) => {
  let asked = false;
  const { scheduler, deepest } = loop((s) => {
    if (asked) return;
    asked = true;
    s.requestEvaluation('now');
    s.requestEvaluation('now');
    s.requestEvaluation('soon');
  });
  t.after(() => scheduler.stop());
  scheduler.requestEvaluation('now');
  assert.equal(scheduler.counters.evaluations, 1, "'now' outside a step runs one at once");
  await sleep(0);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(scheduler.counters.evaluations, 2, 'the three requests made inside it ran one more step, after it');
  assert.equal(deepest(), 1, 'no step ran inside another');
  await sleep(COMMAND_EVALUATION_MS * 2);
  assert.equal(scheduler.counters.evaluations, 2, 'and nothing more');
});

test("commands' requests share one step, at most one every COMMAND_EVALUATION_MS", async (t) => {
  const { scheduler } = loop(() => undefined);
  t.after(() => scheduler.stop());
  scheduler.requestEvaluation('now');
  for (let i = 0; i < 5; i++) scheduler.requestEvaluation('soon');
  assert.equal(scheduler.counters.evaluations, 1, "'soon' never steps at once");
  await sleep(COMMAND_EVALUATION_MS * 3);
  assert.equal(scheduler.counters.evaluations, 2, 'five requests, one step');
});

test('while the jobs of an earlier engine are restored, requests wait and run one step when it is done', async (t) => {
  const { scheduler } = loop(() => undefined);
  t.after(() => scheduler.stop());
  scheduler.pauseEvaluation(true);
  scheduler.requestEvaluation('now');
  scheduler.requestEvaluation('now');
  assert.equal(scheduler.counters.evaluations, 0);
  scheduler.pauseEvaluation(false);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(scheduler.counters.evaluations, 1);
});
