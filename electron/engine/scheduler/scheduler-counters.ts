// What the scheduler has done since the engine started, counted where it happens (fire() and the
// quota's refusals), so the metrics endpoint reads one owner's figures instead of re-deriving them.
import { SUSPENSION_REASONS, type SuspensionReason } from '../../../shared/jobs.js';
import type { JobEvent } from './job-state.js';

export class SchedulerCounters {
  /** Times the launch gate held a job back for a higher-priority one (the 'gate' transition). */
  gateWaits = 0;
  /** Suspensions by the hold that caused them. */
  readonly suspensions = new Map<SuspensionReason, number>(SUSPENSION_REASONS.map((r) => [r, 0]));
  /** Jobs whose GPU memory went to host memory (the 'parked' transition). */
  parks = 0;
  /** Allocations a job's memory quota refused (the preload library counts them; we add what is new). */
  quotaRefusals = 0;
  /** Evaluations run (every policy over every job): on ticks, and after commands. */
  evaluations = 0;

  /** A job moved by `event`; `suspendedBy` is its hold after the move. */
  noteTransition(event: JobEvent, suspendedBy: SuspensionReason | null): void {
    if (event === 'gate') this.gateWaits++;
    else if (event === 'parked') this.parks++;
    else if (event === 'suspend' && suspendedBy !== null) this.suspensions.set(suspendedBy, (this.suspensions.get(suspendedBy) ?? 0) + 1);
  }

  noteQuotaRefusals(count: number): void {
    if (count > 0) this.quotaRefusals += count;
  }
}
