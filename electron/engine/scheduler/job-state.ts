// A job's state machine: the states, the events that move a job between them, and the
// one table of allowed transitions. Every state change in the engine goes through fire();
// an event the table does not allow is an error that is logged and changes nothing.
import type { JobState } from '../../../shared/jobs.js';

export const JOB_EVENTS = [
  'start', // the launcher is asked to start a queued job
  'started', // its process exists
  'cancel', // taken off the queue before it started
  'gate', // the launch gate holds it back for a higher-priority job
  'ungate',
  'suspend', // its first hold: a person, its quota or a higher priority
  'resume', // its last hold is gone
  'park', // checkpointing its GPU memory to host memory begins
  'parked',
  'park-failed',
  'unpark', // restoring its GPU memory begins
  'unparked',
  'unpark-failed',
  'adopt', // a new engine found its process alive, running
  'adopt-parked', // a new engine found its process alive, still checkpointed
  'exit', // its process ended with status 0
  'fail', // its process ended otherwise, or could not start
  'lose', // its process is gone and no exit status can be known
] as const;
export type JobEvent = (typeof JOB_EVENTS)[number];

/** The process ended (or will never run): reachable from every state that has or may have a process. */
const ENDINGS = { exit: 'finished', fail: 'failed', lose: 'lost' } as const;
const ADOPTION = { adopt: 'running', 'adopt-parked': 'parked', ...ENDINGS } as const;

/** THE transition table: state → event → next state. Anything missing is refused. */
export const TRANSITIONS: Readonly<Record<JobState, Readonly<Partial<Record<JobEvent, JobState>>>>> = {
  queued: { start: 'starting', cancel: 'failed' },
  starting: { started: 'running', ...ADOPTION },
  running: { gate: 'gated', suspend: 'suspended', park: 'parking', ...ADOPTION },
  gated: { ungate: 'running', suspend: 'suspended', park: 'parking', ...ADOPTION },
  suspended: { resume: 'running', gate: 'gated', ...ADOPTION }, // gate: only a priority hold is left, and the gate holds that
  parking: { parked: 'parked', 'park-failed': 'running', ...ADOPTION },
  parked: { unpark: 'unparking', ...ADOPTION },
  unparking: { unparked: 'running', 'unpark-failed': 'parked', ...ADOPTION },
  finished: {},
  failed: {},
  lost: {},
};

/** The state `event` moves a job in `state` to, or null when the table refuses it. */
export function nextState(state: JobState, event: JobEvent): JobState | null {
  return TRANSITIONS[state][event] ?? null;
}

/** States whose process is off the GPU's books or mid-checkpoint: no policy may act on them. */
export const PARK_STATES: ReadonlySet<JobState> = new Set(['parking', 'parked', 'unparking']);

/** A reason is a sentence: this long at most in the history (the store's too). */
export const REASON_KEPT = 1024;

/** Append to a job's history: its first entry stays, the oldest after it go past HISTORY_KEPT, counted by state. */
export function addHistory(job: StatefulJob, entry: { state: JobState; at: number; reason: string }): void {
  const reason = entry.reason.length > REASON_KEPT ? `${entry.reason.slice(0, REASON_KEPT - 1)}…` : entry.reason;
  job.history.push({ ...entry, reason });
  if (job.history.length <= HISTORY_KEPT) return;
  const gone = job.history.splice(1, job.history.length - HISTORY_KEPT); // one, or an earlier engine's longer history
  const dropped = (job.historyDropped ??= { entries: 0, byState: {} });
  for (const { state } of gone) {
    dropped.entries++;
    dropped.byState[state] = (dropped.byState[state] ?? 0) + 1;
  }
}

export class IllegalTransition extends Error {
  override name = 'IllegalTransition';
  constructor(
    readonly jobId: string,
    readonly state: JobState,
    readonly event: JobEvent,
  ) {
    super(`${jobId}: "${event}" is not allowed in state ${state}; the job stays ${state}.`);
  }
}

/** A job's history keeps its first entry (submission: it orders the queue) and its latest ones, this many in all. */
export const HISTORY_KEPT = 50;

/** What fire() needs of a job: its id, state and history (a JobView has them). */
export interface StatefulJob {
  id: string;
  state: JobState;
  history: Array<{ state: JobState; at: number; reason: string }>;
  historyDropped?: { entries: number; byState: Partial<Record<JobState, number>> };
}

export class JobStateMachine {
  constructor(private readonly log: (error: IllegalTransition) => void = (error) => process.stderr.write(`gpushare: ${error.message}\n`)) {}

  /** Move the job by `event`; false (logged, nothing changed) when the table refuses it. */
  fire(job: StatefulJob, event: JobEvent, reason: string, at = Date.now()): boolean {
    const next = nextState(job.state, event);
    if (next === null) {
      this.log(new IllegalTransition(job.id, job.state, event));
      return false;
    }
    job.state = next;
    addHistory(job, { state: next, at, reason });
    return true;
  }
}
