// Where a page's main thread spends its time while `run` drives updates: a Chrome trace over CDP, its
// busiest thread's events, and each event name's exclusive time. The console's benches share it.
import { writeFileSync } from 'node:fs';
import type { CDPSession } from 'playwright-core';

export interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  tid: number;
  pid: number;
  /** What the event carries (a layout's dirty objects, a function's source), as Chrome wrote it. */
  args?: Record<string, unknown>;
}

/** BENCH_TRACE_CATEGORIES replaces them, e.g. adding disabled-by-default-devtools.timeline.invalidationTracking to see why layout and style ran. */
const CATEGORIES = process.env.BENCH_TRACE_CATEGORIES ?? 'devtools.timeline,disabled-by-default-devtools.timeline,blink,cc,toplevel,v8';

/**
 * The complete events of the busiest thread while `run` ran, in order (parents before their children).
 * With `saveTo`, the whole trace is also written there, for Chrome's performance panel to load.
 */
export async function traceMainThread(cdp: CDPSession, run: () => Promise<unknown>, saveTo?: string, workers?: { cpuMs: number }): Promise<TraceEvent[]> {
  const events: TraceEvent[] = [];
  cdp.on('Tracing.dataCollected', ({ value }) => events.push(...(value as unknown as TraceEvent[])));
  const done = new Promise<void>((resolve) => cdp.once('Tracing.tracingComplete', () => resolve()));
  await cdp.send('Tracing.start', { categories: CATEGORIES, transferMode: 'ReportEvents' });
  await run();
  await cdp.send('Tracing.end');
  await done;
  if (saveTo) writeFileSync(saveTo, JSON.stringify({ traceEvents: events }));
  const busiest = new Map<string, number>();
  for (const e of events) if (e.name === 'RunTask' && e.dur) busiest.set(`${e.pid}:${e.tid}`, (busiest.get(`${e.pid}:${e.tid}`) ?? 0) + e.dur);
  const thread = [...busiest].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (workers) workers.cpuMs = workerCpuMs(events);
  return events.filter((e) => `${e.pid}:${e.tid}` === thread && e.ph === 'X' && e.dur).sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
}

/** Prints the names that took most exclusive time (a parent's time less its children's), per update. */
export function printExclusiveTimes(onThread: TraceEvent[], updates: number): void {
  const exclusive = new Map<string, number>();
  const open: TraceEvent[] = [];
  for (const e of onThread) {
    while (open.length > 0 && open[open.length - 1].ts + open[open.length - 1].dur! <= e.ts) open.pop();
    const parent = open[open.length - 1];
    exclusive.set(e.name, (exclusive.get(e.name) ?? 0) + e.dur!);
    if (parent) exclusive.set(parent.name, (exclusive.get(parent.name) ?? 0) - e.dur!);
    open.push(e);
  }
  for (const [name, us] of [...exclusive].sort((a, b) => b[1] - a[1]).slice(0, 16)) console.log(`${(us / 1000 / updates).toFixed(2).padStart(8)} ms/update  ${name}`);
}

/** The CPU time of the page's dedicated workers' tasks over a trace, in ms: work moved off the main thread still costs a core. */
function workerCpuMs(events: Array<TraceEvent & { tdur?: number }>): number {
  const names = new Map(events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => [`${e.pid}:${e.tid}`, String(e.args?.name ?? '')]));
  const onWorker = (e: TraceEvent): boolean => /DedicatedWorker/.test(names.get(`${e.pid}:${e.tid}`) ?? '');
  return events.filter((e) => e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask' && onWorker(e)).reduce((sum, e) => sum + (e.tdur ?? 0), 0) / 1000;
}
