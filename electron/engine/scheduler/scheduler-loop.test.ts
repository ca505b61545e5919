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
import { newJobView } from './job-table.js';
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

test('while steps are paused, requests wait and run one step when they resume', async (t) => {
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

test("an enrolled job's end is a wish: asked outside a step it ends at once, asked during one it ends in the next step, not inside", async (t) => {
  const seen: string[] = [];
  let ask: (() => void) | null = null;
  const { scheduler, deepest } = loop((s) => {
    const asked = ask;
    ask = null;
    asked?.();
    seen.push(['j1', 'j2'].map((id) => `${id} ${s.table.get(id)!.view.state}`).join(', '));
  });
  t.after(() => scheduler.stop());
  const enrolled = (id: string, pid: number) =>
    scheduler.table.add(newJobView({ id, managed: true, owner: 'alice', uid: 1000, argv: ['python'], gpu: 0, pid, enrolled: { by: 'tree', group: `tree:${id}`, name: null, pgid: pid, sid: pid } }, 'running', 'enrolled'), { startTicks: 1 });
  const [j1, j2] = [enrolled('j1', 1_000_001), enrolled('j2', 1_000_002)];
  scheduler.enrolledAlive = () => true; // its members live: only the asked end ends it
  scheduler.endEnrolled(j1, 'its grant never reached pid 1000001');
  assert.equal(j1.view.state, 'finished', 'outside a step: the step it asks for runs at once');
  ask = () => scheduler.endEnrolled(j2, 'the Slurm epilog ran');
  scheduler.requestEvaluation('now');
  assert.equal(j2.view.state, 'running', 'asked inside a step: not ended inside it');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(j2.view.state, 'finished');
  assert.equal(j2.view.history.at(-1)!.reason, 'the Slurm epilog ran');
  assert.deepEqual(seen.slice(0, 2), ['j1 finished, j2 running', 'j1 finished, j2 running'], 'the step j2\'s end was asked in ended it not');
  assert.equal(seen.at(-1), 'j1 finished, j2 finished', 'a later step did');
  assert.equal(deepest(), 1, 'no step ran inside another');
});

test('while the jobs of an earlier engine are taken back, steps decide nothing; once they are, a step decides', async (t) => {
  const { scheduler } = loop(() => undefined);
  t.after(() => scheduler.stop());
  let load!: (jobs: Array<{ view: ReturnType<typeof newJobView>; kept: object }>) => void;
  const back = scheduler.takeBack(new Promise((resolve) => (load = resolve)));
  scheduler.requestEvaluation('now');
  scheduler.requestEvaluation('now');
  assert.equal(scheduler.counters.evaluations, 0, 'the store is still read: nothing decided');
  const queued = newJobView({ id: 'j7', managed: true, owner: 'alice', uid: 1000, argv: ['train'] }, 'queued', 'submitted');
  load([{ view: queued, kept: {} }]);
  await back;
  assert.equal(scheduler.counters.evaluations, 1, 'a step decided once they were back');
  assert.equal(scheduler.table.get('j7')?.view.state, 'queued', 'a queued job waits on');
});
