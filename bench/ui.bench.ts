// bench/ui: the real console (dist/renderer) in Chromium, fed a synthetic stream of
// 8 GPUs × 64 processes at one snapshot per simulated second, 10-minute window.
// Prints main-thread milliseconds per update (median, p95) and the JS heap after 1 and
// 30 simulated minutes. Budget (DESIGN.md §7): < 8 ms per update, a flat heap. Never fails on time.
// To find where the time goes: BENCH_PROFILE=1 (JS by function, and what the slowest updates run
// beyond the median), BENCH_TRACE=1 (the main thread by trace event, and the slowest updates'),
// BENCH_ALLOC=1 (bytes allocated per update by function: garbage is what makes the slow ones),
// BENCH_SERIES=1 (each update's CPU in order), BENCH_QUICK=1 (the first figure only, for A/B runs).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { chromium } from 'playwright-core';
import { packageRoot } from '../electron/engine/paths.js';
import { printExclusiveTimes, traceMainThread, type TraceEvent } from './main-thread-trace.js';

// these run in the page, where the DOM exists
declare const window: Window & Record<string, unknown>;
declare function requestAnimationFrame(callback: (time: number) => void): number;
interface Window { [key: string]: unknown }

const GPUS = 8;
const PROCESSES_PER_GPU = 64;
const MEASURED_UPDATES = Number(process.env.BENCH_UPDATES ?? 60);
/** The console measured: dist/renderer, or $GPUSHARE_BENCH_RENDERER (a console built elsewhere, to compare two builds). */
const root = process.env.GPUSHARE_BENCH_RENDERER || join(packageRoot(), 'dist', 'renderer');
const CHROMIUM = '/usr/bin/chromium';

if (!existsSync(join(root, 'index.html')) || !existsSync(CHROMIUM)) {
  console.log(`bench/ui skipped: needs ${CHROMIUM} and a built console (npm run build:renderer).`);
  process.exit(0);
}

/** Runs in the page before the console starts: a fake preload bridge the bench drives. */
function installSyntheticBridge({ gpus, perGpu }: { gpus: number; perGpu: number }): void {
  type Listener = (data: unknown) => void;
  const listeners = new Map<string, Set<Listener>>();
  const t0 = Date.UTC(2026, 0, 1, 9, 0, 0);
  const GIB = 1024 ** 3;
  const users = ['ana', 'bo', 'chen', 'dev', 'eli', 'fay', 'gus', 'hai'];
  const snapshotAt = (second: number): unknown => {
    const processes = [];
    for (let g = 0; g < gpus; g++) {
      for (let p = 0; p < perGpu; p++) {
        const pid = 10_000 + g * 1000 + p;
        const wave = Math.sin(second / 30 + pid) * 0.5 + 0.5;
        processes.push({
          pid, gpuIndex: g, gpuUuid: `GPU-${g}`, kind: 'compute', user: users[(g + p) % users.length], uid: 1000 + ((g + p) % users.length),
          command: p % 3 === 0 ? 'python' : 'jupyter', argv: ['python', `train_${p}.py`, '--epochs', '90'], startedAt: t0,
          usedMemory: Math.round((0.2 + wave) * GIB), smPercent: Math.round((100 / perGpu) * (0.5 + wave)), memPercent: null,
          gpuInstanceId: null, computeInstanceId: null,
        });
      }
    }
    return {
      seq: second, takenAt: t0 + second * 1000,
      driver: { driverVersion: '550.54.15', nvmlVersion: '12.550.54.15', cudaDriverVersion: 12040, simulated: true, scenario: 'bench' },
      gpus: Array.from({ length: gpus }, (_, g) => ({
        index: g, uuid: `GPU-${g}`, name: 'NVIDIA H100 80GB HBM3', pciBusId: `0000:${g}0:00.0`, lost: false,
        memoryTotal: 80 * GIB, memoryUsed: 60 * GIB, memoryFree: 20 * GIB, utilizationGpu: 90, utilizationMemory: 40,
        temperatureC: 70, powerWatts: 500, powerLimitWatts: 700, smClockMHz: 1980, memClockMHz: 2619, smCount: 132,
        computeMode: 'default', migEnabled: false, migPending: false, migSlices: [], errors: [],
      })),
      processes,
    };
  };
  const bench = {
    second: 0,
    /** Emit the next `count` snapshots. */
    emit(count: number): void {
      for (let i = 0; i < count; i++) for (const l of listeners.get('snapshot') ?? []) l(snapshotAt(bench.second++));
    },
  };
  (window as unknown as { gpushareBench: typeof bench }).gpushareBench = bench;
  (window as unknown as { gpushare: unknown }).gpushare = {
    call: async (method: string) => {
      const answers: Record<string, unknown> = {
        'snapshot.latest': null,
        'alerts.list': [],
        'mps.status': [],
        'session.whoami': { user: 'ana', uid: 1000, admin: false },
      };
      // like an engine without a scheduler: the board shows the snapshot's processes
      return method in answers ? { ok: true, result: answers[method] } : { ok: false, error: { code: 'unsupported', message: `${method} is not available in this engine yet.` } };
    },
    on: (event: string, listener: Listener) => {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)!.add(listener);
      return () => listeners.get(event)!.delete(listener);
    },
  };
}

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
await page.route('http://bench.gpushare/**', (route) => {
  const path = new URL(route.request().url()).pathname;
  const file = join(root, path === '/' ? 'index.html' : path);
  route.fulfill({ body: existsSync(file) ? readFileSync(file) : '', contentType: TYPES[extname(file)] ?? 'application/octet-stream', status: existsSync(file) ? 200 : 404 });
});
page.on('pageerror', (error) => console.error('page error:', error.message));
await page.addInitScript(installSyntheticBridge, { gpus: GPUS, perGpu: PROCESSES_PER_GPU });
await page.goto('http://bench.gpushare/');
const cdp = await page.context().newCDPSession(page);
await cdp.send('Performance.enable');

const metric = async (name: string): Promise<number> => {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return metrics.find((m) => m.name === name)?.value ?? NaN;
};
const heapMiB = async (): Promise<number> => {
  await cdp.send('HeapProfiler.collectGarbage');
  return (await metric('JSHeapUsedSize')) / 1024 ** 2;
};
/** Emit `count` snapshots, then wait until the console committed and painted. */
const feed = (count: number): Promise<void> =>
  page.evaluate(async (n) => {
    const w = window as unknown as { gpushareBench: { emit(n: number): void }; gpushareCommits: number };
    const before = w.gpushareCommits;
    w.gpushareBench.emit(n);
    while (w.gpushareCommits === before) await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  }, count);
/** What the harness alone costs: the same wait for a frame, with nothing new to show. */
const idleUpdate = (): Promise<void> =>
  page.evaluate(async () => {
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  });
/** The console commits at most every 100 ms; at one update a second it never waits, so neither does the bench. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 150));

/**
 * What one update cost on the page's main thread, in ms (CDP Performance metrics, deltas):
 * `task` is the wall time of its tasks, `cpu` the thread's CPU time — on a loaded two-core
 * machine the first also counts time the thread was descheduled by other processes.
 */
interface UpdateCost { task: number; cpu: number; script: number; layout: number; style: number }
const PARTS = { task: 'TaskDuration', cpu: 'ThreadTime', script: 'ScriptDuration', layout: 'LayoutDuration', style: 'RecalcStyleDuration' } as const;
const readParts = async (): Promise<UpdateCost> => {
  const { metrics } = await cdp.send('Performance.getMetrics');
  const value = (name: string): number => (metrics.find((m) => m.name === name)?.value ?? NaN) * 1000;
  return { task: value(PARTS.task), cpu: value(PARTS.cpu), script: value(PARTS.script), layout: value(PARTS.layout), style: value(PARTS.style) };
};
const measure = async (n: number, step: () => Promise<void>): Promise<UpdateCost[]> => {
  const costs: UpdateCost[] = [];
  for (let i = 0; i < n; i++) {
    await settle();
    const before = await readParts();
    await step();
    const after = await readParts();
    costs.push({ task: after.task - before.task, cpu: after.cpu - before.cpu, script: after.script - before.script, layout: after.layout - before.layout, style: after.style - before.style });
  }
  return costs;
};
/** Paced updates, after a few unmeasured ones: the steady state, not the window-filling burst before it. */
const measureUpdates = async (n: number): Promise<UpdateCost[]> => {
  await measure(10, () => feed(1));
  return measure(n, () => feed(1));
};
const pct = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
let baseline: UpdateCost = { task: 0, cpu: 0, script: 0, layout: 0, style: 0 };
const show = (label: string, costs: UpdateCost[]): void => {
  const figure = (key: 'task' | 'cpu'): string =>
    `median ${(pct(costs.map((c) => c[key]), 50) - baseline[key]).toFixed(1).padStart(5)} ms  p95 ${(pct(costs.map((c) => c[key]), 95) - baseline[key]).toFixed(1).padStart(5)} ms`;
  console.log(`${label.padEnd(44)} task time ${figure('task')}   CPU ${figure('cpu')}   (${costs.length} updates)`);
  const part = (key: 'script' | 'layout' | 'style'): string => (pct(costs.map((c) => c[key]), 50) - baseline[key]).toFixed(1);
  console.log(`${''.padEnd(44)} of which script ${part('script')}, layout ${part('layout')}, style ${part('style')} ms (medians)`);
};

await page.waitForFunction(() => typeof window.gpushareCommits === 'number');
for (let i = 0; i < 60; i += 10) await feed(10);
await page.locator('.gpu-card').first().waitFor(); // the first simulated minute
const heap1 = await heapMiB();
const idle = await measure(20, idleUpdate);
baseline = { task: pct(idle.map((c) => c.task), 50), cpu: pct(idle.map((c) => c.cpu), 50), script: pct(idle.map((c) => c.script), 50), layout: pct(idle.map((c) => c.layout), 50), style: pct(idle.map((c) => c.style), 50) };
console.log(`harness alone (subtracted below): task time ${baseline.task.toFixed(1)} ms, CPU ${baseline.cpu.toFixed(1)} ms per update`);
for (let s = 60; s < 600; s += 60) await feed(60); // fill the 10-minute window
if (process.env.BENCH_PROFILE) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  await cdp.send('Profiler.start');
  await measureUpdates(Number(process.env.BENCH_PROFILE_UPDATES ?? 30));
  const { profile } = await cdp.send('Profiler.stop');
  if (process.env.BENCH_PROFILE_OUT) writeFileSync(process.env.BENCH_PROFILE_OUT, JSON.stringify(profile));
  const self = new Map<string, number>();
  const dt = new Map<number, number>();
  profile.samples?.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas?.[i] ?? 0)));
  for (const node of profile.nodes) {
    const key = `${node.callFrame.functionName || '(anon)'} ${node.callFrame.url.split('/').pop()}:${node.callFrame.lineNumber}:${node.callFrame.columnNumber}`;
    self.set(key, (self.get(key) ?? 0) + (dt.get(node.id) ?? 0) / 1000);
  }
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(v.toFixed(0).padStart(6), 'ms', k);
  // per update (samples in bursts parted by the bench's pauses): what the slowest run that the median does not
  const keyOf = new Map(profile.nodes.map((node) => [node.id, `${node.callFrame.functionName || '(anon)'} ${node.callFrame.url.split('/').pop()}:${node.callFrame.lineNumber}`]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const updates: Array<Map<string, number>> = [];
  let quiet = Infinity;
  profile.samples?.forEach((id, i) => {
    const ms = (profile.timeDeltas?.[i] ?? 0) / 1000;
    const key = keyOf.get(id) ?? '';
    if (key.startsWith('(idle)')) {
      quiet += ms;
      return;
    }
    if (quiet > 80) updates.push(new Map());
    quiet = 0;
    // inclusive time: the sample counts for its function and every caller
    const seen = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parentOf.get(node)) {
      const k = keyOf.get(node)!;
      if (seen.has(k)) continue;
      seen.add(k);
      updates[updates.length - 1].set(k, (updates[updates.length - 1].get(k) ?? 0) + ms);
    }
  });
  const totalOf = (u: Map<string, number>): number => u.get('(root) :-1') ?? 0;
  updates.sort((a, b) => totalOf(a) - totalOf(b));
  const mid = updates[Math.floor(updates.length / 2)];
  console.log(`${updates.length} updates profiled: median ${totalOf(mid).toFixed(1)} ms of JS and page work; the slowest, inclusive time beyond the median:`);
  for (const slow of updates.slice(-Math.max(1, Math.ceil(updates.length / 10)))) {
    const extra = [...slow].map(([k, ms]) => [k, ms - (mid.get(k) ?? 0)] as const).filter(([k]) => !k.startsWith('(root)')).sort((a, b) => b[1] - a[1]).slice(0, 8);
    console.log(`  ${totalOf(slow).toFixed(1)} ms: ${extra.map(([k, ms]) => `${k} +${ms.toFixed(1)}`).join(', ')}`);
  }
}
if (process.env.BENCH_ALLOC) {
  // what the updates allocate (garbage makes the slow updates: major GCs), by allocating function
  await cdp.send('HeapProfiler.enable');
  await cdp.send('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  const sampled = 30;
  await measureUpdates(sampled);
  const { profile } = await cdp.send('HeapProfiler.stopSampling');
  type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] };
  const bytes = new Map<string, number>();
  const walk = (node: Node): void => {
    const key = `${node.callFrame.functionName || '(anon)'} ${node.callFrame.url.split('/').pop()}:${node.callFrame.lineNumber}`;
    bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
    node.children.forEach(walk);
  };
  walk(profile.head as unknown as Node);
  const total = [...bytes.values()].reduce((a, b) => a + b, 0);
  console.log(`allocated ${(total / sampled / 1024).toFixed(0)} KiB per update (sampled), by function:`);
  for (const [k, v] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${(v / sampled / 1024).toFixed(0).padStart(6)} KiB  ${k}`);
}
if (process.env.BENCH_TRACE) {
  // where the main thread's time goes: exclusive time per trace event name, per update
  const traced = Number(process.env.BENCH_TRACE_UPDATES ?? 20);
  const onThread = await traceMainThread(cdp, () => measureUpdates(traced));
  printExclusiveTimes(onThread, traced);
  // the slow updates (p95): the thread's work in bursts parted by the bench's 150 ms pauses, slowest against the median
  const bursts: TraceEvent[][] = [];
  let burstEnd = -Infinity;
  for (const e of onThread) {
    if (e.ts - burstEnd > 80_000) bursts.push([]);
    bursts[bursts.length - 1].push(e);
    burstEnd = Math.max(burstEnd, e.ts + e.dur!);
  }
  const profileOf = (burst: TraceEvent[]): { total: number; names: Map<string, number> } => {
    const names = new Map<string, number>();
    const stack: TraceEvent[] = [];
    let total = 0;
    for (const e of burst) {
      while (stack.length > 0 && stack[stack.length - 1].ts + stack[stack.length - 1].dur! <= e.ts) stack.pop();
      const parent = stack[stack.length - 1];
      if (!parent) total += e.dur!;
      names.set(e.name, (names.get(e.name) ?? 0) + e.dur!);
      if (parent) names.set(parent.name, (names.get(parent.name) ?? 0) - e.dur!);
      stack.push(e);
    }
    return { total, names };
  };
  const profiles = bursts.map(profileOf).sort((a, b) => a.total - b.total);
  const median = profiles[Math.floor(profiles.length / 2)];
  console.log(`${profiles.length} updates traced: median ${(median.total / 1000).toFixed(1)} ms; the slowest:`);
  for (const slow of profiles.slice(-Math.max(1, Math.ceil(profiles.length / 20)))) {
    const extra = [...slow.names].map(([name, us]) => [name, us - (median.names.get(name) ?? 0)] as const).sort((a, b) => b[1] - a[1]).slice(0, 6);
    console.log(`  ${(slow.total / 1000).toFixed(1)} ms, more than the median in: ${extra.map(([name, us]) => `${name} +${(us / 1000).toFixed(1)}`).join(', ')}`);
  }
}
const atTop = await measureUpdates(MEASURED_UPDATES);
show('update at 10 min (window full), top of the page', atTop);
// each update's CPU in order: a pattern (every nth slow) points at what runs every nth update
if (process.env.BENCH_SERIES) console.log(atTop.map((c) => (c.cpu - baseline.cpu).toFixed(1)).join(' '));
if (process.env.BENCH_SCREENSHOT) await page.screenshot({ path: process.env.BENCH_SCREENSHOT, fullPage: true });
if (process.env.BENCH_QUICK) {
  // the first figure only, to compare builds back to back
  await browser.close();
  process.exit(0);
}
// scrolled down to the process table: the GPU cards and timelines above pause while out of view
await page.locator('.process-panel').scrollIntoViewIfNeeded();
await feed(1);
show('update at 10 min, process table in view', await measureUpdates(MEASURED_UPDATES));
await page.evaluate(() => (window as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
while ((await page.evaluate(() => (window as unknown as { gpushareBench: { second: number } }).gpushareBench.second)) < 1800) await feed(60);
show('update at 30 min, top of the page', await measureUpdates(MEASURED_UPDATES));
const heap30 = await heapMiB();
console.log(`JS heap after GC: ${heap1.toFixed(1)} MiB at 1 min, ${heap30.toFixed(1)} MiB at 30 min (${(heap30 - heap1 >= 0 ? '+' : '') + (heap30 - heap1).toFixed(1)} MiB)`);
// past the first half hour the rings are full and every cache warm: the heap must stop growing
const later: string[] = [];
for (const minute of [60, 120]) {
  while ((await page.evaluate(() => (window as unknown as { gpushareBench: { second: number } }).gpushareBench.second)) < minute * 60) await feed(60);
  later.push(`${(await heapMiB()).toFixed(2)} MiB at ${minute} min`);
}
console.log(`                  ${heap30.toFixed(2)} MiB at 30 min, ${later.join(', ')}`);
console.log(`(${GPUS} GPUs × ${PROCESSES_PER_GPU} processes, one snapshot per simulated second, 10-minute window, 1440×1000 viewport; budget < 8 ms per update)`);
await browser.close();
