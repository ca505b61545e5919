// Follow one job for a bounded time after a command, so the CLI can say what happened:
// the state it came to, why it waits, or that it failed at once. Event-driven ('jobs',
// 'alert', 'conditions'), with a slow poll as a fallback for events missed before subscribing.
import type { ActiveCondition, GpushareApi } from '../../shared/api.js';
import { FINAL_STATES, gpusPhrase, type Alert, type JobState, type JobView } from '../../shared/jobs.js';

/** States a job passes through on its way somewhere: the CLI waits for it to leave them. */
export const PASSING_STATES: ReadonlySet<JobState> = new Set(['queued', 'starting', 'parking', 'unparking']);
const POLL_MS = 250;

export interface JobOutcome {
  job: JobView;
  /** Why it waits in the queue, in the engine's words (without "jN (cmd) is queued: "); null when not known. */
  waitingFor: string | null;
  /** False when the time ran out while it was still passing through a state. */
  settled: boolean;
}

export interface FollowOptions {
  /** How long to follow it at most. */
  waitMs: number;
  /** Once it runs, how long to keep watching for an early failure (at most waitMs in all). */
  runningMs: number;
}

export class JobWatch {
  private readonly jobs = new Map<string, JobView>();
  private readonly waiting = new Map<string, string>();
  private readonly offs: Array<() => void>;
  private wake: (() => void) | null = null;

  /** Subscribe before the command, so no change is missed between it and following. */
  constructor(private readonly engine: GpushareApi) {
    this.offs = [
      engine.on('jobs', (list) => list.forEach((j) => this.note(j))),
      engine.on('alert', (alert) => this.noteAlert(alert)),
      engine.on('conditions', (list) => this.noteConditions(list)),
    ];
  }

  close(): void {
    this.offs.forEach((off) => off());
    this.wake?.();
  }

  /** Follow `job` until it settles: a final state, a queue wait with its reason, or running for runningMs. */
  async follow(job: JobView, options: FollowOptions, now: () => number = Date.now): Promise<JobOutcome> {
    this.note(job);
    const start = now();
    let runningSince: number | null = null;
    let nextPoll = start;
    for (;;) {
      const current = this.jobs.get(job.id)!;
      const waitingFor = this.waiting.get(job.id) ?? null;
      const t = now();
      if (FINAL_STATES.has(current.state)) return { job: current, waitingFor: null, settled: true };
      if (current.state === 'queued' && waitingFor !== null) return { job: current, waitingFor, settled: true };
      if (!PASSING_STATES.has(current.state)) runningSince ??= t;
      else runningSince = null;
      if (runningSince !== null && t - runningSince >= options.runningMs) return { job: current, waitingFor: null, settled: true };
      if (t - start >= options.waitMs) return { job: current, waitingFor, settled: !PASSING_STATES.has(current.state) };
      if (t >= nextPoll) {
        nextPoll = t + POLL_MS;
        await this.poll(job.id);
        continue;
      }
      const until = Math.min(nextPoll, start + options.waitMs, runningSince === null ? Infinity : runningSince + options.runningMs);
      await this.sleep(Math.max(1, until - t));
    }
  }

  private async poll(id: string): Promise<void> {
    const [jobs, active] = await Promise.all([
      this.engine.call('jobs.list', { includeFinished: true }),
      this.engine.call('alerts.active', {}).catch(() => null), // an engine without it: the alert events still say it
    ]);
    const found = jobs.find((j) => j.id === id);
    if (found) this.note(found);
    if (active) this.noteConditions(active);
  }

  private note(job: JobView): void {
    const known = this.jobs.get(job.id);
    // the newest view wins: more history, or the same history with fresher readings
    if (!known || job.history.length >= known.history.length) this.jobs.set(job.id, job);
    if (job.state !== 'queued') this.waiting.delete(job.id);
    this.wake?.();
  }

  private noteAlert(alert: Alert): void {
    if (alert.kind !== 'waiting' || !alert.jobId) return;
    this.waiting.set(alert.jobId, waitReason(alert.message));
    this.wake?.();
  }

  private noteConditions(list: readonly ActiveCondition[]): void {
    for (const c of list) if (c.kind === 'waiting' && c.jobId) this.waiting.set(c.jobId, waitReason(c.message));
    this.wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }
}

/** "j7 (python) is queued: GPU 0 has 12G free and j7 needs 20G." → "GPU 0 has 12G free and j7 needs 20G". */
export function waitReason(message: string): string {
  return message.replace(/^\S+ (\([^)]*\) )?is queued: /, '').replace(/\.$/, '');
}

/** One line: "j7 running on GPU 0, pid 4242" ("on GPUs 0,2"), "j7 queued: GPU 0 has …", "j7 failed: exit code 1". */
export function describeOutcome({ job, waitingFor, settled }: JobOutcome, box?: string): string {
  const reason = job.history[job.history.length - 1]?.reason ?? '';
  // a job sent to another box (run --box): "gpushare jobs" here would not list it (jobs --box does), and "GPU 0" alone would read as this box's
  const on = box === undefined ? '' : ` on ${box}`;
  const waitingForGpus = job.gpu === null ? `waiting for ${(job.gpuCount ?? 1) > 1 ? `${job.gpuCount} GPUs` : 'a GPU'}` : `waiting for ${gpusPhrase(job)}`;
  if (job.state === 'queued') return `${job.id} queued${on}: ${waitingFor ?? waitingForGpus}`;
  if (job.state === 'running' || job.state === 'gated') return `${job.id} ${job.state} on ${gpusPhrase(job)}${box === undefined ? '' : ` of ${box}`}, pid ${job.pid}${job.state === 'gated' ? ` (${reason})` : ''}`;
  const follow = box === undefined ? 'see gpushare jobs' : `see gpushare jobs --box ${box}`;
  return `${job.id} ${job.state}${on}: ${reason}${settled ? '' : ` (still in progress; ${follow})`}`;
}
