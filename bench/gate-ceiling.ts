// The ceiling of a gate table cell: the most best-effort GPU time ANY non-preemptive scheduler could
// run beside the high jobs' requests of that cell's own arrival draw while meeting the p99 goal, found
// exactly (dynamic programming over the requests) under this model:
//   - one GPU that runs one kernel at a time, each to its end once started (no preemption: the
//     simulated engine's ticket lock); high kernels run in arrival order (FIFO, as the engine's tickets);
//   - each high request is one kernel of known run time, ready at its arrival (clairvoyance: the
//     scheduler knows every arrival and run time in advance);
//   - best-effort kernels all last k and one is always ready; they count only between the first high
//     request's arrival and the last high kernel's end (the bench's measuring span), and the best
//     schedule is the one whose best-effort kernels fill the largest share of that span;
//   - a request is on time when its GPU latency (arrival to its kernel's end) is at most its job's
//     bound: the alone run's p99 of that latency plus the slack (10 % of the job's alone p99 as the job
//     measured it), i.e. the CPU part of each request's latency is taken to be the same alone and shared;
//   - each job may have `lateAllowed` requests over its bound (the 1 % the p99 ignores), delayed by any
//     amount, except that the span may not grow: the last high kernel ends by its bound, or by its end
//     alone where that is later (else late requests pushed to the end would stretch the span for ever).
//     Best-effort work that would delay a late request past the next one's latest start is counted
//     before that next request instead (the same kernels, the same end): the search needs no more.
// It ignores the launch and synchronisation costs, the gate's own delays, CPU noise, and the high
// kernels' own slowdown beside best-effort work. Under these assumptions it is an upper bound for any
// gate; outside them (e.g. a GPU that runs two kernels at once, or preemption) it is not.
// How: the state after each request is (late requests used per job, best-effort kernels run) -> the
// earliest end of that request's kernel; a later end with no more kernels is dominated (for the count
// and for the share of the span alike), so only the Pareto front is kept. Best-effort kernels before a request run back to back from the previous
// high kernel's end, so n of them start the request at max(arrival, previousEnd + n·k).

export interface HighRequest {
  job: number; // index into CeilingInput.jobs
  arrivalNs: number;
  runNs: number; // its kernel's run time
}

export interface JobBound {
  latencyBoundNs: number; // a request is on time when arrival to kernel end is at most this
  lateAllowed: number; // requests of this job that may exceed it
}

export interface CeilingInput {
  requests: HighRequest[];
  jobs: JobBound[];
  beKernelNs: number;
}

export interface Ceiling {
  beKernels: number; // best-effort kernels the best schedule runs
  beNs: number;
  spanNs: number; // first arrival to the last high kernel's end in the best schedule
  idleNs: number; // what the high kernels leave idle in that span
  beFraction: number; // beNs / spanNs: comparable to the bench's best-effort busy fraction
  keptOfIdle: number; // beNs / idleNs (1 when every idle nanosecond could hold best-effort work)
  lateUsed: number[]; // per job, late requests in the best schedule
}

interface State {
  late: number[];
  kernels: number;
  endNs: number;
}

const key = (late: number[]): string => late.join(',');

/** Keeps, per late vector, the points with more kernels only where they also end later (the Pareto front). */
function addState(front: Map<string, State[]>, s: State): void {
  const k = key(s.late);
  const list = front.get(k);
  if (!list) {
    front.set(k, [s]);
    return;
  }
  if (list.some((o) => o.kernels >= s.kernels && o.endNs <= s.endNs)) return;
  const kept = list.filter((o) => !(s.kernels >= o.kernels && s.endNs <= o.endNs));
  kept.push(s);
  front.set(k, kept);
}

function validate(input: CeilingInput): void {
  const { requests, jobs, beKernelNs } = input;
  if (!(beKernelNs > 0)) throw new Error(`ceiling: beKernelNs must be > 0, not ${beKernelNs}`);
  if (!requests.length) throw new Error('ceiling: no high requests');
  jobs.forEach((j, i) => {
    if (!(j.latencyBoundNs >= 0) || !Number.isInteger(j.lateAllowed) || j.lateAllowed < 0)
      throw new Error(`ceiling: job ${i} needs latencyBoundNs >= 0 and an integer lateAllowed >= 0, not ${JSON.stringify(j)}`);
  });
  requests.forEach((r, i) => {
    if (!jobs[r.job] || !Number.isFinite(r.arrivalNs) || !(r.runNs >= 0))
      throw new Error(`ceiling: request ${i} needs a known job, a finite arrivalNs and runNs >= 0, not ${JSON.stringify(r)}`);
  });
}

export function nonPreemptiveCeiling(input: CeilingInput): Ceiling {
  validate(input);
  const k = input.beKernelNs;
  const reqs = [...input.requests].sort((a, b) => a.arrivalNs - b.arrivalNs);
  const deadline = (i: number): number => reqs[i].arrivalNs + input.jobs[reqs[i].job].latencyBoundNs;
  let aloneEnd = -Infinity;
  for (const r of reqs) aloneEnd = Math.max(r.arrivalNs, aloneEnd) + r.runNs;
  // the span ends by the last request's bound, or where it ends alone when it is late even alone
  const latestEndOf = (i: number): number => (i === reqs.length - 1 ? Math.max(deadline(i), aloneEnd) : deadline(i));
  let front = new Map<string, State[]>();
  // the first request starts the span: best-effort work before it does not count
  const first = reqs[0];
  const firstLate = first.runNs > input.jobs[first.job].latencyBoundNs;
  const late0 = input.jobs.map((_, j) => (firstLate && j === first.job ? 1 : 0));
  if (firstLate && input.jobs[first.job].lateAllowed < 1) return empty(reqs, aloneEnd);
  addState(front, { late: late0, kernels: 0, endNs: first.arrivalNs + first.runNs });
  for (let i = 1; i < reqs.length; i++) {
    const r = reqs[i];
    const job = input.jobs[r.job];
    const last = i === reqs.length - 1;
    const next = front;
    front = new Map();
    for (const list of next.values()) {
      for (const s of list) {
        // on time: start by deadline - run
        const latestStart = deadline(i) - r.runNs;
        const idleKernels = Math.max(0, Math.floor((r.arrivalNs - s.endNs) / k)); // these fit before the arrival
        for (let n = idleKernels; ; n++) {
          const start = Math.max(r.arrivalNs, s.endNs + n * k);
          if (start > latestStart) break;
          addState(front, { late: s.late, kernels: s.kernels + n, endNs: start + r.runNs });
        }
        // late: any delay, but (see the header) no more than the next request's own deadline allows;
        // more best-effort work would then just as well run before that next request. A request late
        // with no delay (its queue alone makes it late) is late at its earliest start, the last one too.
        if (s.late[r.job] >= job.lateAllowed) continue;
        const late = s.late.map((v, j) => (j === r.job ? v + 1 : v));
        const latestEnd = last ? aloneEnd : latestEndOf(i + 1) - reqs[i + 1].runNs;
        for (let n = idleKernels; ; n++) {
          const end = Math.max(r.arrivalNs, s.endNs + n * k) + r.runNs;
          if (end <= deadline(i)) continue; // that is the on-time case above
          if (end > latestEnd && (last || n > idleKernels)) break;
          addState(front, { late, kernels: s.kernels + n, endNs: end });
          if (end > latestEnd) break;
        }
      }
    }
    if (!front.size) return empty(reqs, aloneEnd);
  }
  // the best schedule keeps the largest share of its own span (a delayed last request lengthens it)
  const share = (s: State): number => (s.kernels * k) / (s.endNs - first.arrivalNs);
  let best: State | null = null;
  for (const list of front.values()) for (const s of list) if (!best || share(s) > share(best)) best = s;
  return summary(reqs, best!.endNs, best!.kernels * k, best!.kernels, best!.late);
}

function summary(reqs: HighRequest[], spanEnd: number, beNs: number, beKernels: number, lateUsed: number[]): Ceiling {
  const spanNs = spanEnd - reqs[0].arrivalNs;
  const idleNs = spanNs - reqs.reduce((sum, r) => sum + r.runNs, 0);
  return { beKernels, beNs, spanNs, idleNs, beFraction: spanNs > 0 ? beNs / spanNs : 0, keptOfIdle: idleNs > 0 ? beNs / idleNs : 0, lateUsed };
}

const empty = (reqs: HighRequest[], aloneEnd: number): Ceiling => summary(reqs, aloneEnd, 0, 0, []);
