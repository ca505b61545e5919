// The arrival draw of `fakejob infer` (native/fakegpu/src/fakejob.c, profile_infer), made again here
// so bench/gate can give a cell's ceiling the very arrivals its high jobs had: the same xorshift
// generator, seeded the same way, the same exponential gaps (bursts of B requests arrive together,
// the mean rate unchanged). Checked against fakejob's own request count in gate-ceiling.test.ts.
import type { HighRequest, JobBound } from './gate-ceiling.js';

const MASK = (1n << 64n) - 1n;

export interface InferDraw {
  rate: number; // requests per second
  burst: number;
  seed: number;
  durationS: number;
}

/** Arrival times in ms after the job's start, as fakejob infer --rate --burst --seed --duration draws them. */
export function inferArrivalsMs({ rate, burst, seed, durationS }: InferDraw): number[] {
  if (!(rate > 0) || !(burst >= 1) || !Number.isInteger(seed) || seed < 0 || !(durationS > 0))
    throw new Error(`inferArrivalsMs: rate > 0, burst >= 1, an integer seed >= 0 and durationS > 0, not ${JSON.stringify({ rate, burst, seed, durationS })}`);
  let rng = (BigInt(seed) * 0x9e3779b97f4a7c15n + 0x1234567n) & MASK;
  const uniform01 = (): number => {
    rng ^= rng >> 12n;
    rng = (rng ^ (rng << 25n)) & MASK;
    rng ^= rng >> 27n;
    return (Number(((rng * 0x2545f4914f6cdd1dn) & MASK) >> 11n) + 0.5) / 9007199254740992;
  };
  const out: number[] = [];
  let arrival = 0;
  for (let n = 0; ; n++) {
    if (n % burst === 0) arrival += (-Math.log(uniform01()) / rate) * burst * 1e3;
    if (arrival >= durationS * 1e3) return out;
    out.push(arrival);
  }
}

/** Each request's GPU latency (arrival to its kernel's end) when the high jobs run alone: FIFO, one kernel at a time. */
export function aloneLatenciesNs(requests: HighRequest[]): number[] {
  const order = requests.map((_, i) => i).sort((a, b) => requests[a].arrivalNs - requests[b].arrivalNs);
  const out = new Array<number>(requests.length);
  let end = -Infinity;
  for (const i of order) {
    end = Math.max(requests[i].arrivalNs, end) + requests[i].runNs;
    out[i] = end - requests[i].arrivalNs;
  }
  return out;
}

/** The p-th percentile as fakejob reports it: the ceil(p·n)-th smallest value. */
export const percentile = (values: number[], p: number): number => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(p * s.length) - 1)];
};

/**
 * The goal as per-job bounds: a request is on time when its GPU latency is at most its job's alone p99 of
 * that latency plus (ratio − 1) × the job's alone p99 as the job measured it; the requests past the
 * p-th percentile (n − ceil(p·n)) may be late.
 */
export function goalBounds(requests: HighRequest[], measuredAloneP99Ns: number[], ratio = 1.1, p = 0.99): JobBound[] {
  const lat = aloneLatenciesNs(requests);
  return measuredAloneP99Ns.map((measured, job) => {
    const mine = lat.filter((_, i) => requests[i].job === job);
    if (!mine.length) throw new Error(`goalBounds: job ${job} has no requests`);
    return { latencyBoundNs: percentile(mine, p) + (ratio - 1) * measured, lateAllowed: mine.length - Math.ceil(p * mine.length) };
  });
}
