// bench/ui: the real console (dist/renderer) in Chromium, fed a synthetic stream of
// 8 GPUs × 64 processes at one snapshot per simulated second, 10-minute window.
// Prints main-thread milliseconds per update (median, p95) and the JS heap after 1 and
// 30 simulated minutes. Budget (DESIGN.md §7): < 8 ms per update, a flat heap. Never fails on time.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { chromium } from 'playwright-core';
import { packageRoot } from '../electron/engine/paths.js';

// these run in the page, where the DOM exists
declare const window: Window & Record<string, unknown>;
declare function requestAnimationFrame(callback: (time: number) => void): number;
interface Window { [key: string]: unknown }

const GPUS = 8;
const PROCESSES_PER_GPU = 64;
const MEASURED_UPDATES = Number(process.env.BENCH_UPDATES ?? 60);
const root = join(packageRoot(), 'dist', 'renderer');
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
    while (w.gpushareCommits === before) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  }, count);
const idleCost = async (): Promise<number> => {
  const before = await metric('TaskDuration');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return ((await metric('TaskDuration')) - before) * 1000;
};
/** What one update cost, in main-thread ms, by kind (CDP Performance metrics, deltas). */
interface UpdateCost { task: number; script: number; layout: number; style: number }
const PARTS = { task: 'TaskDuration', script: 'ScriptDuration', layout: 'LayoutDuration', style: 'RecalcStyleDuration' } as const;
const readParts = async (): Promise<UpdateCost> => {
  const { metrics } = await cdp.send('Performance.getMetrics');
  const value = (name: string): number => (metrics.find((m) => m.name === name)?.value ?? NaN) * 1000;
  return { task: value(PARTS.task), script: value(PARTS.script), layout: value(PARTS.layout), style: value(PARTS.style) };
};
let lastBreakdown: UpdateCost[] = [];
const measureUpdates = async (n: number): Promise<number[]> => {
  const costs: UpdateCost[] = [];
  for (let i = 0; i < n; i++) {
    const before = await readParts();
    await feed(1);
    const after = await readParts();
    costs.push({ task: after.task - before.task, script: after.script - before.script, layout: after.layout - before.layout, style: after.style - before.style });
  }
  lastBreakdown = costs;
  return costs.map((c) => c.task).sort((a, b) => a - b);
};
const medianOf = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
const breakdown = (): string =>
  `   script ${medianOf(lastBreakdown.map((c) => c.script)).toFixed(1)}, layout ${medianOf(lastBreakdown.map((c) => c.layout)).toFixed(1)}, style ${medianOf(lastBreakdown.map((c) => c.style)).toFixed(1)} ms (medians)`;
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const show = (label: string, costs: number[], baseline: number): void =>
  console.log(`${label.padEnd(40)} median ${(pct(costs, 50) - baseline).toFixed(1).padStart(5)} ms   p95 ${(pct(costs, 95) - baseline).toFixed(1).padStart(5)} ms   (${costs.length} updates, ${baseline.toFixed(1)} ms harness cost subtracted)`);

await page.waitForFunction(() => typeof window.gpushareCommits === 'number');
for (let i = 0; i < 60; i += 10) await feed(10);
await page.locator('.gpu-card').first().waitFor(); // the first simulated minute
const heap1 = await heapMiB();
const idle = [];
for (let i = 0; i < 20; i++) idle.push(await idleCost());
const baseline = pct(idle.sort((a, b) => a - b), 50);
for (let s = 60; s < 600; s += 60) await feed(60); // fill the 10-minute window
if (process.env.BENCH_PROFILE) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.start');
  await measureUpdates(10);
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
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const node of profile.nodes.filter((n) => n.callFrame.functionName === 'getBoundingClientRect' && (dt.get(n.id) ?? 0) > 5000)) {
    const chain: string[] = [];
    for (let id = parentOf.get(node.id); id !== undefined && chain.length < 6; id = parentOf.get(id)) chain.push(`${byId.get(id)!.callFrame.functionName}:${byId.get(id)!.callFrame.lineNumber}:${byId.get(id)!.callFrame.columnNumber}`);
    console.log('getBoundingClientRect', ((dt.get(node.id) ?? 0) / 1000).toFixed(0), 'ms via', chain.join(' < '));
  }
}
if (process.env.BENCH_TRACE) {
  // where the main thread's time goes, by trace event (self time of top-level work, roughly)
  const events: Array<{ name: string; ph: string; dur?: number; tid: number; pid: number; args?: { data?: { frame?: string } } }> = [];
  cdp.on('Tracing.dataCollected', ({ value }) => events.push(...(value as unknown as typeof events)));
  const done = new Promise<void>((resolve) => cdp.once('Tracing.tracingComplete', () => resolve()));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline', transferMode: 'ReportEvents' });
  await measureUpdates(20);
  await cdp.send('Tracing.end');
  await done;
  const main = events.find((e) => e.name === 'TracingStartedInBrowser' || e.name === 'RunTask');
  const busiest = new Map<string, number>();
  for (const e of events) if (e.name === 'RunTask' && e.dur) busiest.set(`${e.pid}:${e.tid}`, (busiest.get(`${e.pid}:${e.tid}`) ?? 0) + e.dur);
  const thread = [...busiest].sort((a, b) => b[1] - a[1])[0]?.[0] ?? `${main?.pid}:${main?.tid}`;
  const byName = new Map<string, number>();
  for (const e of events) if (`${e.pid}:${e.tid}` === thread && e.ph === 'X' && e.dur) byName.set(e.name, (byName.get(e.name) ?? 0) + e.dur / 1000 / 20);
  for (const [name, ms] of [...byName].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${ms.toFixed(2).padStart(8)} ms/update  ${name}`);
  // the first big layouts and paints: how much was dirty, and from which root
  for (const e of events.filter((x) => `${x.pid}:${x.tid}` === thread && (x.name === 'Layout' || x.name === 'Paint') && (x.dur ?? 0) > 1000).slice(0, 6)) console.log(e.name, ((e.dur ?? 0) / 1000).toFixed(1), 'ms', JSON.stringify(e.args).slice(0, 240));
}
show('update at 10 min (window full)', await measureUpdates(MEASURED_UPDATES), baseline);
console.log(breakdown());
if (process.env.BENCH_SCREENSHOT) await page.screenshot({ path: process.env.BENCH_SCREENSHOT, fullPage: true });
while ((await page.evaluate(() => (window as unknown as { gpushareBench: { second: number } }).gpushareBench.second)) < 1800) await feed(60);
show('update at 30 min', await measureUpdates(MEASURED_UPDATES), baseline);
console.log(breakdown());
const heap30 = await heapMiB();
console.log(`JS heap after GC: ${heap1.toFixed(1)} MiB at 1 min, ${heap30.toFixed(1)} MiB at 30 min (${(heap30 - heap1 >= 0 ? '+' : '') + (heap30 - heap1).toFixed(1)} MiB)`);
console.log(`(${GPUS} GPUs × ${PROCESSES_PER_GPU} processes, one snapshot per simulated second, 10-minute window; budget < 8 ms per update)`);
await browser.close();
