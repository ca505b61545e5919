// Idle holders: a job or process that holds GPU memory and has not computed for a while keeps
// others off that memory. Its owner is told (an 'idle' condition, raised once per onset); after
// a grace period, where the lab policy allows, it is parked (its memory moved to host memory)
// until its owner unparks it. High-priority jobs are never parked for it.
import { formatByteSize } from '../../../../shared/jobs.js';
import type { LabPolicy } from '../../../../shared/lab-policy.js';
import type { JobRecord } from '../job-table.js';
import type { Condition } from '../policies.js';

const MINUTE_MS = 60_000;

export interface IdleDecision {
  /** One 'idle' condition per holder past the notice time. */
  conditions: Condition[];
  /** Holders past the grace period to park now. */
  park: JobRecord[];
}

/** Idle: running on its own account (no hold of ours), memory on the GPU, no SM time in the last reading. */
export function holdsIdle(record: JobRecord): boolean {
  const job = record.view;
  return job.state === 'running' && record.holds.size === 0 && (job.usedMemory ?? 0) > 0 && job.smPercent === 0;
}

const minutes = (ms: number): string => `${Math.round(ms / MINUTE_MS)} min`;

export class IdleHolders {
  /** Job id → when it was first seen idle in this stretch. */
  private readonly idleSince = new Map<string, number>();
  /** Jobs whose park was asked for in this stretch (asked once: a refusal is not retried every tick). */
  private readonly parkAsked = new Set<string>();

  /** Follow every live job at `now`; a job that computes, leaves, or is parked starts afresh. */
  observe(records: readonly JobRecord[], now: number, policy: LabPolicy['idleHolders']): IdleDecision {
    const notifyMs = policy.notifyAfterMinutes * MINUTE_MS;
    const parkMs = notifyMs + policy.graceMinutes * MINUTE_MS;
    const seen = new Set<string>();
    const decision: IdleDecision = { conditions: [], park: [] };
    for (const record of records) {
      const id = record.view.id;
      if (!holdsIdle(record)) continue;
      seen.add(id);
      const since = this.idleSince.get(id) ?? now;
      this.idleSince.set(id, since);
      const idleMs = now - since;
      if (idleMs < notifyMs) continue;
      const parkable = policy.park && record.view.priority !== 'high';
      decision.conditions.push(idleCondition(record, idleMs, parkable ? Math.max(0, parkMs - idleMs) : null));
      if (parkable && idleMs >= parkMs && !this.parkAsked.has(id)) {
        this.parkAsked.add(id);
        decision.park.push(record);
      }
    }
    for (const id of this.idleSince.keys()) {
      if (seen.has(id)) continue;
      this.idleSince.delete(id);
      this.parkAsked.delete(id);
    }
    return decision;
  }
}

function idleCondition(record: JobRecord, idleMs: number, parkInMs: number | null): Condition {
  const job = record.view;
  const what = `${job.id} (${job.argv[0]?.split('/').pop() ?? '?'}, ${job.owner})`;
  const next =
    parkInMs === null
      ? 'Free it if it is no longer needed (lab policy).'
      : parkInMs > 0
        ? `It will be parked in ${minutes(parkInMs)} unless it computes (lab policy); unpark it when you need it again.`
        : 'It is being parked (lab policy); unpark it when you need it again.';
  return {
    key: `idle:${job.id}`,
    kind: 'idle',
    severity: 'warning',
    gpu: job.gpu,
    jobId: job.id,
    message: `${what} holds ${formatByteSize(job.usedMemory ?? 0)} of GPU ${job.gpu} memory and has not computed for ${minutes(idleMs)}. ${next}`,
  };
}
