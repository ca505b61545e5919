// bench/preload-cost: what the preload library costs a process that never uses CUDA (the box-wide route
// loads it into every process). Whole-process wall time (posix_spawn to waitpid,
// native/preload/bench/exec_time.c) of /bin/true and python3 -c pass, with and without
// LD_PRELOAD=libgpushare-preload.so, runs interleaved so that a busy machine's drift falls on both alike.
// The loader's work is the same through /etc/ld.so.preload. Noise: the difference between the medians of
// the odd and the even runs without the library. For scale, the same for an empty library (one int, built
// here with gcc): what the loader costs for any one more object. Also the child's minor page faults (a
// count, steady where time is noisy: what the loader and the library touched). Goal: within noise, at
// most 1 %. Prints figures; never fails on time.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePreloadBuilt, preloadBuildDir } from '../electron/engine/gate/testing/launch-gate-sim.js';
import { preloadLibraryPath } from '../electron/engine/gate/launch-gate.js';

const RUNS = Math.max(20, Number(process.env.BENCH_RUNS ?? 200));
const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (v: number[], p: number): number => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor((p / 100) * v.length))];
const us = (ns: number): string => (ns / 1000).toFixed(0).padStart(7);

if (!ensurePreloadBuilt()) {
  console.log('bench/preload-cost: the preload library is not built (npm run build:native)');
  process.exit(0);
}
const work = mkdtempSync(join(tmpdir(), 'gpushare-preload-cost-'));
writeFileSync(join(work, 'empty.c'), 'int gs_empty;\n');
let empty: string | null = join(work, 'libempty.so');
try {
  execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-o', empty, join(work, 'empty.c')]);
} catch {
  empty = null;
}
console.log(`bench/preload-cost: ${RUNS} runs each way (python3: a quarter), interleaved; whole-process wall time in µs (${preloadLibraryPath()})`);
console.log('program          library | without: median    p90 | with: median    p90 |  cost (median)     | noise (median)    | page faults without → with');
for (const [name, runs, argv] of [
  ['/bin/true', RUNS, ['/bin/true']],
  ['python3 -c pass', Math.max(20, Math.round(RUNS / 4)), ['/usr/bin/python3', '-c', 'pass']],
] as const) {
  for (const [label, lib] of [['gpushare', preloadLibraryPath()], ['empty', empty]] as const) {
    if (!lib) continue;
    const out = execFileSync(join(preloadBuildDir(), 'exec_time'), [String(runs), lib, ...argv], { encoding: 'utf8', maxBuffer: 1 << 24 });
    const without: number[] = [];
    const withLib: number[] = [];
    const faults: Record<string, number[]> = { with: [], without: [] };
    for (const line of out.trim().split('\n')) {
      const [which, ns, minflt] = line.split(' ');
      (which === 'with' ? withLib : without).push(Number(ns));
      faults[which].push(Number(minflt));
    }
    const base = median(without);
    const cost = median(withLib) - base;
    const noise = Math.abs(median(without.filter((_, i) => i % 2 === 0)) - median(without.filter((_, i) => i % 2 === 1)));
    console.log(
      `${name.padEnd(16)} ${label.padEnd(8)} | ${us(base)} ${us(pct(without, 90))} | ${us(median(withLib))} ${us(pct(withLib, 90))} | ${us(cost)} µs ${((100 * cost) / base).toFixed(2).padStart(6)} % | ${us(noise)} µs ${((100 * noise) / base).toFixed(2).padStart(5)} % | ${median(faults.without)} → ${median(faults.with)}`,
    );
  }
}
rmSync(work, { recursive: true, force: true });
