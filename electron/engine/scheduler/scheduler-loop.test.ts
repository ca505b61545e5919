// The control loop's one way in: requestEvaluation. A step never runs inside another; requests made
// during a step run exactly one more step after it; commands' requests share one step; a person's move
// is applied by a step its command starts, the command answers after it, and the policies decide on it
// in the commands' shared step.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import type { ApiEvents } from '../../../shared/api.js';
import type { JobView } from '../../../shared/jobs.js';
import { Dispatcher, type Caller } from '../api/dispatcher.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import { emptySnapshot } from '../testing/empty-snapshot.js';
import { EventBus } from '../event-bus.js';
import { Freezer } from '../holds/freezer.js';
import { ProcessControl } from '../holds/process-control.js';
import { until } from '../../testing/until.js';
import { readProcStatus } from '../proc/proc-status.js';
import { fakeGpu } from '../store/testing/synthetic.js';
import { newJobView } from './job-table.js';
import { registerJobCommands } from './scheduler-commands.js';
import { COMMAND_EVALUATION_MS, Scheduler } from './scheduler.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-loop-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const snapshot: Snapshot = emptySnapshot();

/** A scheduler on a box with no GPU (or `box`'s); `duringStep` runs inside every step (where it publishes its conditions). */
function loop(duringStep: (scheduler: Scheduler, depth: number) => void, box: Snapshot = snapshot) {
  let depth = 0;
  let deepest = 0;
  const control = new ProcessControl();
  const scheduler: Scheduler = new Scheduler({
    engine: {
      sampler: { latest: box, sampleNow: () => box } as never,
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

/** The loop with the job commands on a dispatcher, on a box with one GPU, and one running job of ours (a real process, so a suspend stops it). */
async function loopWithCommands(t: { after: (fn: () => unknown) => void }, duringStep: (scheduler: Scheduler, depth: number) => void = () => undefined, ownGroup = true) {
  const { scheduler, deepest } = loop(duringStep, { ...snapshot, gpus: [fakeGpu(0)] });
  const dispatcher = new Dispatcher();
  const me = userInfo();
  registerJobCommands(dispatcher, scheduler, { logPath: (id) => join(dir, `${id}.log`), ready: Promise.resolve(), rights: { engineUid: me.uid, engineUser: me.username, adminGroup: null }, engineKind: 'personal' });
  const child = spawn('sleep', ['60'], { stdio: 'ignore', detached: ownGroup }); // its own process group, as a job's (unless the test says not)
  await new Promise((resolve) => child.once('spawn', resolve));
  t.after(() => {
    child.kill('SIGKILL');
    return scheduler.stop();
  });
  const job = scheduler.table.add(newJobView({ id: 'j1', managed: true, owner: me.username, uid: me.uid, argv: ['sleep', '60'], gpu: 0, requestedGpu: 0, pid: child.pid! }, 'running', 'started'), { startTicks: readProcStatus(child.pid!)!.startTicks });
  const caller: Caller = { uid: me.uid, gid: me.gid, groups: [], user: me.username, pid: null, admin: false, via: 'socket' };
  const call = (method: 'jobs.move' | 'jobs.setPriority' | 'jobs.suspend', params: object) => dispatcher.dispatch(method, params, caller) as Promise<JobView>;
  return { scheduler, deepest, job, call, pid: child.pid! };
}

test("a person's move is applied by a step its command starts, the answer carries the new state, and the policies decide on it in the shared step", async (t) => {
  const seen: string[] = [];
  const { scheduler, deepest, job, call, pid } = await loopWithCommands(t, (s) => {
    const { state, priority, memoryQuotaBytes } = s.table.get('j1')!.view;
    seen.push(`${state} ${priority} ${memoryQuotaBytes}`);
  });
  assert.throws(() => scheduler.setPriority(job, 'high'), /outside a step of the control loop/, "the scheduler's own methods apply a change only inside a step");
  scheduler.requestEvaluation('now'); // a step just ran: the commands' shared one waits its COMMAND_EVALUATION_MS
  seen.length = 0;
  const decided = scheduler.counters.evaluations;
  const answer = await call('jobs.move', { job: 'j1', priority: 'best-effort', memoryQuotaBytes: 1024, action: 'suspend' });
  assert.deepEqual([answer.state, answer.priority, answer.memoryQuotaBytes], ['suspended', 'best-effort', 1024], 'the answer shows the job as moved: a step applied it before the command answered');
  assert.deepEqual([scheduler.counters.evaluations, seen], [decided, []], 'that step only applied: no pass over the queue for a move');
  await until('the suspend reaches the process', () => /^[Tt]$/.test(readProcStatus(pid)!.state)); // a signal lands on its own time
  await sleep(COMMAND_EVALUATION_MS * 2);
  assert.deepEqual([scheduler.counters.evaluations, seen], [decided + 1, ['suspended best-effort 1024']], 'the shared step after it decided on the moved job');
  assert.equal(deepest(), 1, 'no step ran inside another');
  const resumed = await call('jobs.move', { job: 'j1', priority: 'normal', action: 'resume' });
  assert.deepEqual([resumed.state, resumed.priority], ['running', 'normal']);
});

test('a move asked while steps wait is applied by the step after them, checked again there: refused whole when the job changed meanwhile', async (t) => {
  const { scheduler, job, call } = await loopWithCommands(t);
  scheduler.pauseEvaluation(true);
  let settled: JobView | null = null;
  const raised = call('jobs.setPriority', { job: 'j1', priority: 'high' }).then((view) => (settled = view));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(settled, null, 'no answer while no step ran');
  assert.equal(job.view.priority, 'normal', 'and nothing applied');
  const refused = call('jobs.move', { job: 'j1', priority: 'best-effort', action: 'suspend' });
  scheduler.fire(job, 'park', 'parking, asked by a test'); // the job changes before the step: its suspend is no longer allowed
  scheduler.pauseEvaluation(false);
  assert.equal((await raised).priority, 'high', 'the step after the pause applied it; the answer shows it');
  await assert.rejects(refused, { code: 'conflict', message: /j1 is being parked; unpark it first/ });
  assert.equal(job.view.priority, 'high', 'the refused move changed nothing: not its priority either');
  assert.deepEqual([...job.holds], []);
});

test('a move whose suspend the actuators refuse (its process leads no group of its own) is refused whole: its priority and quota stay', async (t) => {
  const { job, call } = await loopWithCommands(t, undefined, false);
  const before = structuredClone(job.view);
  await assert.rejects(call('jobs.move', { job: 'j1', priority: 'best-effort', memoryQuotaBytes: 1024, action: 'suspend' }), { code: 'conflict', message: /does not lead one/ });
  assert.deepEqual([job.view.state, job.view.priority, job.view.memoryQuotaBytes], [before.state, before.priority, before.memoryQuotaBytes]);
  assert.deepEqual([...job.holds], []);
});
