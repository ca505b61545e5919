// MIG + MPS: small jobs that share one MIG slice through MPS (as ParvaGPU packs inference jobs), each
// limited to its SM share by CUDA_MPS_ACTIVE_THREAD_PERCENTAGE. The planner groups jobs this way only
// when that places more jobs than one slice per job does.

/** One job's MPS client setting in a shared slice. */
export interface MpsShare {
  jobId: string;
  /** CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for it: its SM share of the slice; 100 when it asked for none (time-shared). */
  activeThreadPercentage: number;
}

/** MPS serves at most this many clients per device (Volta and later); a MIG slice is a device. */
export const MPS_MAX_CLIENTS = 48;

/**
 * Every partition of items 0..n-1 into groups, as arrays of groups (each ascending), in a fixed order.
 * Bell(7) = 877 for the planner's seven jobs; `accept` prunes a group as soon as it is formed.
 */
export function* setPartitions(n: number, accept: (group: number[]) => boolean = () => true): Generator<number[][]> {
  const groups: number[][] = [];
  function* place(i: number): Generator<number[][]> {
    if (i === n) {
      if (groups.every(accept)) yield groups.map((g) => [...g]);
      return;
    }
    for (const group of groups) {
      group.push(i);
      if (accept(group)) yield* place(i + 1);
      group.pop();
    }
    groups.push([i]);
    yield* place(i + 1);
    groups.pop();
  }
  yield* place(0);
}

/** Each job's active thread percentage in a slice of sliceSms SMs: its SMs, rounded up, at least 1. */
export function mpsShares(members: Array<{ id: string; sms: number }>, sliceSms: number): MpsShare[] {
  return members.map((m) => ({
    jobId: m.id,
    activeThreadPercentage: m.sms > 0 ? Math.min(100, Math.max(1, Math.ceil((m.sms / sliceSms) * 100 - 1e-9))) : 100,
  }));
}
