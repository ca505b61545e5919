// The non-preemptive ceiling of a gate table cell, on hand-worked cases, against an exhaustive search
// on small random ones, and against the closed form for Poisson gaps; and the arrival draw it is
// given, against fakejob's own request count.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nonPreemptiveCeiling, type CeilingInput, type HighRequest, type JobBound } from './gate-ceiling.js';
import { goalBounds, inferArrivalsMs } from './gate-ceiling-draw.js';
import { SimulatedDriver, simulatedDriverBuilt } from '../electron/engine/gpu/simulated-driver.js';

const K = 1_000_000; // a 1 ms best-effort kernel
const RUN = 2_000_000;
/** N requests of one job, one every `period` ns, each running RUN ns. */
const periodic = (n: number, period: number): HighRequest[] => Array.from({ length: n }, (_, i) => ({ job: 0, arrivalNs: i * period, runNs: RUN }));
const oneJob = (latencyBoundNs: number, lateAllowed = 0): JobBound[] => [{ latencyBoundNs, lateAllowed }];

/** The same model searched exhaustively: every number of best-effort kernels before every request, every late choice (any delay). */
function exhaustive(input: CeilingInput): number { // the best share of the span
  const k = input.beKernelNs;
  const reqs = [...input.requests].sort((a, b) => a.arrivalNs - b.arrivalNs);
  let aloneEnd = -Infinity;
  for (const r of reqs) aloneEnd = Math.max(r.arrivalNs, aloneEnd) + r.runNs;
  const last = reqs.at(-1)!;
  const spanEnd = Math.max(aloneEnd, last.arrivalNs + input.jobs[last.job].latencyBoundNs);
  let best = -1;
  const visit = (i: number, endNs: number, kernels: number, late: number[]): void => {
    if (i === reqs.length) {
      best = Math.max(best, (kernels * k) / (endNs - reqs[0].arrivalNs));
      return;
    }
    const r = reqs[i];
    const maxN = i === 0 ? 0 : Math.max(0, Math.ceil((spanEnd - endNs) / k)) + 1;
    for (let n = 0; n <= maxN; n++) {
      const end = (i === 0 ? r.arrivalNs : Math.max(r.arrivalNs, endNs + n * k)) + r.runNs;
      const onTime = end - r.arrivalNs <= input.jobs[r.job].latencyBoundNs;
      if (onTime) visit(i + 1, end, kernels + n, late);
      // the span may not grow: the last kernel ends by its bound or by its end alone
      else if (late[r.job] < input.jobs[r.job].lateAllowed && (i < reqs.length - 1 || end <= spanEnd))
        visit(i + 1, end, kernels + n, late.map((v, j) => (j === r.job ? v + 1 : v)));
    }
  };
  visit(0, -Infinity, 0, input.jobs.map(() => 0));
  return Math.max(best, 0);
}

describe('non-preemptive ceiling', () => {
  test('gaps that are all whole multiples of the best-effort kernel, no slack: every idle nanosecond is kept', () => {
    const c = nonPreemptiveCeiling({ requests: periodic(50, RUN + 3 * K), jobs: oneJob(RUN), beKernelNs: K });
    assert.equal(c.beKernels, 49 * 3);
    assert.equal(c.keptOfIdle, 1);
    assert.equal(c.spanNs, 49 * (RUN + 3 * K) + RUN);
  });

  test('gaps all shorter than the best-effort kernel and no slack: nothing is kept', () => {
    const c = nonPreemptiveCeiling({ requests: periodic(50, RUN + 0.9 * K), jobs: oneJob(RUN), beKernelNs: K });
    assert.equal(c.beKernels, 0);
    assert.equal(c.keptOfIdle, 0);
  });

  test('the late allowance: with gaps of 0.6 k and no slack, each late request lets exactly one kernel run (two gaps joined), and uses its allowance', () => {
    const requests = periodic(100, RUN + 0.6 * K);
    for (const allowed of [0, 1, 2]) {
      const c = nonPreemptiveCeiling({ requests, jobs: oneJob(RUN, allowed), beKernelNs: K });
      assert.equal(c.beKernels, allowed, `allowed ${allowed}`);
      assert.deepEqual(c.lateUsed, [allowed]);
    }
  });

  test('a delay carries into the next gap: gaps of 0.6 k with 0.5 k of slack hold a kernel in every other gap, not in every gap', () => {
    const n = 41;
    const c = nonPreemptiveCeiling({ requests: periodic(n, RUN + 0.6 * K), jobs: oneJob(RUN + 0.5 * K), beKernelNs: K });
    assert.equal(c.beKernels, (n - 1) / 2);
  });

  test('Poisson arrivals of instant kernels, no slack: the idle time kept is Σ_{n≥1} k·e^(−n·k/μ) / μ (seeded 200 000 arrivals, within 0.01)', () => {
    const rate = 1000; // per second: mean gap μ = 1 ms
    const mu = 1e9 / rate;
    const arrivals = inferArrivalsMs({ rate, burst: 1, seed: 5, durationS: 200 });
    assert.ok(arrivals.length > 190_000);
    const requests = arrivals.map((ms) => ({ job: 0, arrivalNs: ms * 1e6, runNs: 0 }));
    for (const k of [0.25 * mu, mu, 3 * mu]) {
      const c = nonPreemptiveCeiling({ requests, jobs: oneJob(0), beKernelNs: k });
      let closed = 0;
      for (let n = 1; n * k < 60 * mu; n++) closed += (k * Math.exp((-n * k) / mu)) / mu;
      assert.ok(Math.abs(c.keptOfIdle - closed) < 0.01, `k = ${k / mu} μ: ${c.keptOfIdle} vs closed form ${closed}`);
    }
  });

  test('the best share of the span found is the exhaustive search\'s on 500 small random cases (3 to 7 requests of one or two jobs, slack, up to 2 late each)', () => {
    let seed = 12345;
    const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let c = 0; c < 500; c++) {
      const jobs = Array.from({ length: rand() < 0.5 ? 1 : 2 }, () => ({ latencyBoundNs: (1 + rand() * 2) * K, lateAllowed: Math.floor(rand() * 3) }));
      let t = 0;
      const requests = Array.from({ length: 3 + Math.floor(rand() * 5) }, () => ({
        job: Math.floor(rand() * jobs.length),
        arrivalNs: (t += rand() * 3 * K),
        runNs: (0.2 + rand() * 0.8) * K,
      }));
      const input = { requests, jobs, beKernelNs: (0.3 + rand()) * K };
      const found = nonPreemptiveCeiling(input).beFraction;
      assert.ok(Math.abs(found - exhaustive(input)) < 1e-12, `${found} vs ${exhaustive(input)}: ${JSON.stringify(input)}`);
    }
  });

  test('the goal as bounds: alone p99 of the GPU latency plus 10 % of the measured p99, and n − ceil(0.99 n) requests may be late', () => {
    const requests = periodic(250, 10 * K); // never queued: every GPU latency is the 2 ms run
    const [b] = goalBounds(requests, [3 * K]);
    assert.ok(Math.abs(b.latencyBoundNs - (RUN + 0.1 * 3 * K)) < 1e-6, String(b.latencyBoundNs));
    assert.equal(b.lateAllowed, 2);
  });

  test('bad input gets an error naming the problem', () => {
    assert.throws(() => nonPreemptiveCeiling({ requests: periodic(3, K), jobs: oneJob(RUN), beKernelNs: 0 }), /beKernelNs must be > 0/);
    assert.throws(() => nonPreemptiveCeiling({ requests: [], jobs: oneJob(RUN), beKernelNs: K }), /no high requests/);
    assert.throws(() => nonPreemptiveCeiling({ requests: [{ job: 1, arrivalNs: 0, runNs: K }], jobs: oneJob(RUN), beKernelNs: K }), /request 0 needs a known job/);
    assert.throws(() => nonPreemptiveCeiling({ requests: periodic(3, K), jobs: oneJob(RUN, 0.5), beKernelNs: K }), /integer lateAllowed/);
    assert.throws(() => inferArrivalsMs({ rate: 0, burst: 1, seed: 1, durationS: 1 }), /rate > 0/);
  });
});

describe('the arrival draw is fakejob\'s', { skip: simulatedDriverBuilt() ? false : 'the simulated driver is not built (npm run build:native)' }, () => {
  test('fakejob infer serves as many requests as the draw made (Poisson and bursts of 4, three seeds each)', async () => {
    const driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
    try {
      for (const burst of [1, 4])
        for (const seed of [11, 12, 13]) {
          const draw = { rate: 700, burst, seed, durationS: 0.3 };
          const args = ['infer', '--rate', String(draw.rate), '--kernel-ms', '0', '--duration', String(draw.durationS), '--seed', String(seed), '--burst', String(burst)];
          const job = driver.spawnFakejob(args);
          const latency = await job.waitFor('latency');
          await job.exited;
          assert.equal(latency.requests, inferArrivalsMs(draw).length, JSON.stringify(draw));
        }
    } finally {
      await driver.dispose();
    }
  });
});
