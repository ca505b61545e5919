// The job state machine: every (state, event) pair either moves to the documented state or is
// refused, logged, with the state and history unchanged.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JOB_STATES, type JobState } from '../../../shared/jobs.js';
import { HISTORY_KEPT, IllegalTransition, JOB_EVENTS, JobStateMachine, type JobEvent, type StatefulJob } from './job-state.js';

// The documented table (README "Job states"), written out here independently of TRANSITIONS.
const ENDS = 'exit→finished fail→failed lose→lost adopt→running adopt-parked→parked';
const DOCUMENTED: Record<JobState, string> = {
  queued: 'start→starting cancel→failed',
  starting: `started→running ${ENDS}`,
  running: `gate→gated suspend→suspended park→parking ${ENDS}`,
  gated: `ungate→running suspend→suspended park→parking ${ENDS}`,
  suspended: `resume→running gate→gated ${ENDS}`,
  parking: `parked→parked park-failed→running ${ENDS}`,
  parked: `unpark→unparking ${ENDS}`,
  unparking: `unparked→running unpark-failed→parked ${ENDS}`,
  finished: '',
  failed: '',
  lost: '',
};

function documented(state: JobState, event: JobEvent): JobState | null {
  for (const pair of DOCUMENTED[state].split(' ').filter(Boolean)) {
    const [from, to] = pair.split('→');
    if (from === event) return to as JobState;
  }
  return null;
}

test('every (state, event) pair moves to the documented state or is refused and logged, changing nothing', () => {
  let moves = 0;
  let refusals = 0;
  for (const state of JOB_STATES) {
    for (const event of JOB_EVENTS) {
      const logged: IllegalTransition[] = [];
      const machine = new JobStateMachine((error) => logged.push(error));
      const job = { id: 'j1', state, history: [{ state, at: 1, reason: 'before' }] };
      const moved = machine.fire(job, event, 'because', 2);
      const expected = documented(state, event);
      if (expected === null) {
        refusals++;
        assert.equal(moved, false, `${state} + ${event} must be refused`);
        assert.equal(job.state, state, `${state} + ${event}: the state is unchanged`);
        assert.deepEqual(job.history, [{ state, at: 1, reason: 'before' }], `${state} + ${event}: no history is written`);
        assert.equal(logged.length, 1, `${state} + ${event}: the refusal is logged`);
        assert.match(logged[0].message, new RegExp(`"${event}" is not allowed in state ${state}`));
      } else {
        moves++;
        assert.equal(moved, true, `${state} + ${event} must move to ${expected}`);
        assert.equal(job.state, expected);
        assert.deepEqual(job.history.at(-1), { state: expected, at: 2, reason: 'because' });
        assert.equal(logged.length, 0);
      }
    }
  }
  assert.equal(moves + refusals, JOB_STATES.length * JOB_EVENTS.length);
  assert.ok(moves > 0 && refusals > 0);
});

test('final states are never left, and a parked job cannot be released by a policy event', () => {
  const machine = new JobStateMachine(() => undefined);
  for (const state of ['finished', 'failed', 'lost'] as const) {
    for (const event of JOB_EVENTS) assert.equal(machine.fire({ id: 'j1', state, history: [] }, event, 'x'), false, `${state} + ${event}`);
  }
  for (const event of ['resume', 'ungate', 'gate', 'suspend', 'start', 'started'] as const) {
    const job = { id: 'j2', state: 'parked' as JobState, history: [] };
    assert.equal(machine.fire(job, event, 'a policy'), false, `parked + ${event}`);
    assert.equal(job.state, 'parked');
  }
});

test("a job's history keeps its first entry and its last ones, and counts what it dropped by state (issue 24, finding 9: 2,500 suspend/resume pairs)", () => {
  const machine = new JobStateMachine(() => undefined);
  const job: StatefulJob = { id: 'j1', state: 'running', history: [{ state: 'running', at: 0, reason: 'started' }] };
  for (let i = 1; i <= 2500; i++) {
    machine.fire(job, 'suspend', `suspended by mallory (${i})`, 2 * i);
    machine.fire(job, 'resume', `resumed by mallory (${i})`, 2 * i + 1);
  }
  assert.equal(job.history.length, HISTORY_KEPT);
  assert.deepEqual(job.history[0], { state: 'running', at: 0, reason: 'started' }, 'the first entry stays: it orders the queue');
  assert.deepEqual(job.history.at(-1), { state: 'running', at: 5001, reason: 'resumed by mallory (2500)' });
  const dropped = 5001 - HISTORY_KEPT;
  assert.deepEqual(job.historyDropped, { entries: dropped, byState: { suspended: Math.ceil(dropped / 2), running: Math.floor(dropped / 2) } });
  machine.fire(job, 'suspend', 'x'.repeat(100_000), 6000);
  assert.ok(job.history.at(-1)!.reason.length <= 1024, 'a reason is cut to 1 KB');
});
