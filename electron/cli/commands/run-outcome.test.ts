// What `gpushare run` and `gpushare set` say, against a scripted engine: the state a job came to,
// why it waits, an early failure. Event-driven: no test here waits on a clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActiveCondition, ApiEvent, ApiEvents, ApiMethod, GpushareApi } from '../../../shared/api.js';
import type { Alert, JobState, JobView } from '../../../shared/jobs.js';
import { describeOutcome, JobWatch, waitReason } from '../job-watch.js';
import { stateLine } from './set.js';

function view(state: JobState, reasons: Array<[JobState, string]> = [], over: Partial<JobView> = {}): JobView {
  const history = [{ state: 'queued' as JobState, at: 0, reason: 'submitted by ada' }, ...reasons.map(([s, reason], i) => ({ state: s, at: i + 1, reason }))];
  return {
    id: 'j7', managed: true, owner: 'ada', uid: 1000, argv: ['python', 'train.py'], cwd: '/', gpu: 0, requestedGpu: 0, priority: 'normal',
    memoryQuotaBytes: null, memoryRequestBytes: null, mode: 'shared', mpsSharePercent: null, migSlice: null, state, suspendedBy: null,
    pid: state === 'running' ? 4242 : null, exitCode: null, signal: null, logPath: '/logs/j7.log', history, usedMemory: null, smPercent: null, ...over,
    gpus: over.gpus ?? [over.gpu ?? 0],
  };
}

/** An engine whose events the test sends; jobs.list and alerts.active answer from what it was told last. */
function scriptedEngine(hasActive = true) {
  const listeners = new Map<ApiEvent, Set<(data: never) => void>>();
  let jobs: JobView[] = [];
  let active: ActiveCondition[] = [];
  const engine: GpushareApi = {
    call: (async (method: ApiMethod) => {
      if (method === 'jobs.list') return jobs;
      if (method === 'alerts.active') {
        if (!hasActive) throw new Error('unknown method alerts.active');
        return active;
      }
      throw new Error(`unexpected ${method}`);
    }) as GpushareApi['call'],
    on(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener as (data: never) => void);
      return () => set.delete(listener as (data: never) => void);
    },
  };
  const emit = <E extends ApiEvent>(event: E, data: ApiEvents[E]): void => {
    if (event === 'jobs') jobs = data as JobView[];
    if (event === 'conditions') active = data as ActiveCondition[];
    for (const l of listeners.get(event) ?? []) (l as (d: ApiEvents[E]) => void)(data);
  };
  return { engine, emit };
}

const LONG = { waitMs: 600_000, runningMs: 600_000 };
const waitingAlert = (message: string): Alert => ({ id: 1, kind: 'waiting', at: 0, gpu: 0, jobId: 'j7', message, severity: 'info' });

test('a queued job: run says what it waits for, from the waiting alert', async () => {
  const { engine, emit } = scriptedEngine();
  const watch = new JobWatch(engine);
  const following = watch.follow(view('queued'), LONG);
  emit('alert', waitingAlert('j7 (python) is queued: GPU 0 has 12G free and j7 needs 20G.'));
  const outcome = await following;
  watch.close();
  assert.equal(describeOutcome(outcome), 'j7 queued: GPU 0 has 12G free and j7 needs 20G');
});

test('a queued job: the reason may come as an active condition instead', async () => {
  const { engine, emit } = scriptedEngine();
  const watch = new JobWatch(engine);
  const following = watch.follow(view('queued'), LONG);
  emit('conditions', [{ kind: 'waiting', severity: 'info', gpu: 0, jobId: 'j7', message: 'j7 (python) is queued: waiting for 20G on GPU 0 (12G free).' }]);
  assert.equal(describeOutcome(await following), 'j7 queued: waiting for 20G on GPU 0 (12G free)');
  watch.close();
});

test('a job that cannot start: the outcome is its failure, with the reason', async () => {
  const { engine, emit } = scriptedEngine(false);
  const watch = new JobWatch(engine);
  const following = watch.follow(view('queued'), LONG);
  emit('jobs', [view('starting', [['starting', 'placed on GPU 0']])]);
  emit('jobs', [view('failed', [['starting', 'placed on GPU 0'], ['failed', 'could not start: spawn EACCES']])]);
  const outcome = await following;
  watch.close();
  assert.equal(outcome.job.state, 'failed');
  assert.equal(describeOutcome(outcome), 'j7 failed: could not start: spawn EACCES');
});

test('a job that exits 1 right after it started: failed, not running', async () => {
  const { engine, emit } = scriptedEngine();
  const watch = new JobWatch(engine);
  const following = watch.follow(view('queued'), LONG);
  emit('jobs', [view('running', [['running', 'started on GPU 0 as pid 4242']])]);
  emit('jobs', [view('failed', [['running', 'started on GPU 0 as pid 4242'], ['failed', 'exit code 1']], { exitCode: 1 })]);
  assert.equal(describeOutcome(await following), 'j7 failed: exit code 1');
  watch.close();
});

test('a job that runs: running on its GPU once the watch window is over (zero here)', async () => {
  const { engine, emit } = scriptedEngine();
  const watch = new JobWatch(engine);
  const following = watch.follow(view('queued'), { waitMs: 600_000, runningMs: 0 });
  emit('jobs', [view('running', [['running', 'started on GPU 0 as pid 4242']])]);
  assert.equal(describeOutcome(await following), 'j7 running on GPU 0, pid 4242');
  watch.close();
});

test('an older view arriving late does not undo a newer one', async () => {
  const { engine, emit } = scriptedEngine();
  const watch = new JobWatch(engine);
  const following = watch.follow(view('queued'), LONG);
  const failed = view('failed', [['running', 'started'], ['failed', 'exit code 2']]);
  emit('jobs', [failed]);
  emit('jobs', [view('running', [['running', 'started']])]);
  assert.equal((await following).job.state, 'failed');
  watch.close();
});

test('waiting messages lose the "jN (cmd) is queued:" prefix and the final stop; other text stays whole', () => {
  assert.equal(waitReason('j12 (python) is queued: no GPU fits it now (GPU 1 is lost).'), 'no GPU fits it now (GPU 1 is lost)');
  assert.equal(waitReason('GPU 0 is busy'), 'GPU 0 is busy');
});

test('set: a change that moved the state prints the new state and why; one that did not says what was set', () => {
  const before = view('running', [['running', 'started on GPU 0 as pid 4242']]);
  assert.equal(stateLine(before, 'priority best-effort', null, before), 'j7 running (priority best-effort set)');
  const gated = view('gated', [['running', 'started on GPU 0 as pid 4242'], ['gated', 'j1 (higher priority) is active on GPU 0']]);
  assert.equal(stateLine(gated, 'priority best-effort', null, before), 'j7 gated: j1 (higher priority) is active on GPU 0');
  const parking = view('parking', [['running', 'started'], ['parking', 'parked by ada']]);
  assert.match(stateLine(parking, '', 'park', before), /^j7 parking: parked by ada \(still in progress; see gpushare jobs\)$/);
});

test('set --box: its line names the box, and one still in progress points to gpushare jobs --box', () => {
  const before = view('running', [['running', 'started on GPU 0 as pid 4242']]);
  const parking = view('parking', [['running', 'started'], ['parking', 'parked by ada']]);
  assert.equal(stateLine(parking, '', 'park', before, 'box2'), 'j7 parking on box2: parked by ada (still in progress; see gpushare jobs --box box2)');
  const suspended = view('suspended', [['running', 'started'], ['suspended', 'suspended by ada']]);
  assert.equal(stateLine(suspended, 'priority high', 'suspend', before, 'box2'), 'j7 suspended on box2: suspended by ada (priority high set)');
  assert.equal(stateLine(before, 'priority best-effort', null, before, 'box2'), 'j7 running on box2 (priority best-effort set)');
});

test("a job sent to another box (run --box): each line names the box, and one still in progress points to gpushare jobs --box, not to gpushare jobs here", () => {
  const outcome = (job: JobView, settled = true, waitingFor: string | null = null) => ({ job, waitingFor, settled });
  assert.equal(describeOutcome(outcome(view('running')), 'box2'), 'j7 running on GPU 0 of box2, pid 4242');
  assert.equal(describeOutcome(outcome(view('queued'), true, 'GPU 0 has 12G free and j7 needs 20G'), 'box2'), 'j7 queued on box2: GPU 0 has 12G free and j7 needs 20G');
  assert.equal(describeOutcome(outcome(view('failed', [['failed', 'exit code 1']])), 'box2'), 'j7 failed on box2: exit code 1');
  const starting = outcome(view('starting', [['starting', 'placed on GPU 0']]), false);
  assert.equal(describeOutcome(starting, 'box2'), 'j7 starting on box2: placed on GPU 0 (still in progress; see gpushare jobs --box box2)');
  assert.equal(describeOutcome(starting), 'j7 starting: placed on GPU 0 (still in progress; see gpushare jobs)', 'on this box, as before');
});
