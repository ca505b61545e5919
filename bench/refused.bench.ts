// bench/refused: what refused requests cost the engine. 600 jobs.submit of 900 KB each (an argument
// past its bound) and 600 requests nested 20,000 levels deep, as the engine's own user, then a flood of
// 10,000 refused requests from another user (a socket caller, as on the box daemon), through the
// dispatcher with the usage store attached: the time per request, the engine's heap and RSS, the
// database's size before and after and its growth per refused request, and whether an accepted change
// recorded before the flood is still in audit.list's view (every page it answers). Before issue 16 the
// same 600 submits grew RSS to 2 GB and the database by 1 GB (raw params kept in the audit log). Then,
// as root, the box daemon under one user's socket floods (bench/socket-floods.ts: never-read answers,
// idle connections, a line a byte at a time) with its RSS and descriptors after each. Prints figures;
// never fails on time.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEntry } from '../shared/jobs.js';
import type { Caller } from '../electron/engine/api/dispatcher.js';
import { Engine } from '../electron/engine/engine.js';
import { attachUsageStore } from '../electron/engine/store/attach.js';
import { noGpus } from '../electron/engine/store/testing/synthetic.js';
import { UsageStore } from '../electron/engine/store/usage-store.js';
import { socketFloods } from './socket-floods.js';
import { realBackend } from '../electron/engine/gpu/gpu-backend.js';

const COUNT = Number(process.env.BENCH_COUNT ?? 600);
const FLOOD = Number(process.env.BENCH_FLOOD ?? 10_000);
const MiB = 2 ** 20;

const dir = mkdtempSync(join(tmpdir(), 'gpushare-bench-refused-'));
const path = join(dir, 'usage.db');
const engine = new Engine(realBackend(noGpus, () => undefined));
const store = await UsageStore.open({ path, onNotice: (m) => console.log(`store: ${m}`) });
attachUsageStore(engine, store);

const dbBytes = (): number => ['', '-wal'].reduce((sum, suffix) => sum + (statSync(path + suffix, { throwIfNoEntry: false })?.size ?? 0), 0);
const memory = (): string => {
  const m = process.memoryUsage();
  return `RSS ${(m.rss / MiB).toFixed(0)} MiB, heap ${(m.heapUsed / MiB).toFixed(0)} MiB`;
};

async function refuse(label: string, params: unknown, caller: Caller = engine.owner, count = COUNT): Promise<void> {
  globalThis.gc?.();
  const before = { memory: memory(), db: dbBytes() };
  const start = performance.now();
  let refused = 0;
  const codes = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    await engine.dispatcher.dispatch('jobs.submit', params, caller).catch((error: { code?: string }) => {
      refused++;
      codes.set(error.code ?? 'invalid-request', (codes.get(error.code ?? 'invalid-request') ?? 0) + 1);
    });
  }
  const ms = (performance.now() - start) / count;
  await store.flush();
  globalThis.gc?.();
  let audited: string;
  try {
    audited = `audit.list answers ${(JSON.stringify(engine.dispatcher.auditLog(count)).length / 1024).toFixed(0)} KiB`;
  } catch (error) {
    audited = `audit.list cannot be answered: ${(error as Error).message}`;
  }
  const growth = dbBytes() - before.db;
  const answered = [...codes].map(([code, n]) => `${n} ${code}`).join(', ');
  console.log(`${label}: ${refused}/${count} refused (${answered}), ${ms.toFixed(2)} ms each; before: ${before.memory}, db ${(before.db / MiB).toFixed(2)} MiB; after: ${memory()}, db ${(dbBytes() / MiB).toFixed(2)} MiB, ${(growth / refused).toFixed(0)} bytes a refusal; ${audited}`);
}

/** Every entry audit.list gives an administrator, page by page (one page of up to 10,000 where it does not page). */
async function auditView(): Promise<{ entries: AuditEntry[]; pages: number }> {
  const root: Caller = { ...engine.owner, admin: true };
  const entries: AuditEntry[] = [];
  let pages = 0;
  for (let before: number | undefined; ; ) {
    let page: AuditEntry[];
    try {
      page = (await engine.dispatcher.dispatch('audit.list', { limit: 1000, ...(before === undefined ? {} : { before }) }, root)) as AuditEntry[];
    } catch {
      return { entries: (await engine.dispatcher.dispatch('audit.list', { limit: 10_000 }, root)) as AuditEntry[], pages: 1 };
    }
    pages++;
    if (page.length === 0) return { entries, pages };
    entries.push(...page);
    before = page[page.length - 1].id;
  }
}

const deep = (depth: number): unknown => {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

console.log(`node ${process.version}${globalThis.gc ? ', --expose-gc' : ''}`);
await refuse('900 KB submits', { argv: ['x'.repeat(900_000)], gpu: 'auto' });
await refuse('20,000-deep submits', { argv: deep(20_000), gpu: 'auto' });

// another user's flood: first an accepted change of alice's, then mallory's refusals with the largest rows a refusal keeps
const alice: Caller = { uid: 4343, gid: 4343, groups: [], user: 'alice', pid: null, admin: false, via: 'socket' };
const mallory: Caller = { uid: 4242, gid: 4242, groups: [], user: 'mallory', pid: null, admin: false, via: 'socket' };
engine.dispatcher.register('settings.set', ({ preferences }) => preferences);
await engine.dispatcher.dispatch('settings.set', { preferences: {} }, alice);
const junk = { argv: Array.from({ length: 8 }, (_, i) => `${'x'.repeat(300)}${i}`), cwd: `/${'y'.repeat(300)}`, gpu: 'none', priority: 'z'.repeat(300) };
await refuse(`${FLOOD.toLocaleString('en')} refused submits from another user`, junk, mallory, FLOOD);
const view = await auditView();
const rows = await store.db.get<{ n: number }>('SELECT count(*) AS n FROM audit WHERE who = ?', ['mallory']);
const alicesChange = view.entries.some((e) => e.who === 'alice' && e.what === 'settings.set');
console.log(`after the flood: the database holds ${rows?.n} audit rows of mallory's, ${(dbBytes() / MiB).toFixed(2)} MiB in all; audit.list's view (${view.pages} page${view.pages === 1 ? '' : 's'}, ${view.entries.length} entries) ${alicesChange ? 'still shows' : 'no longer shows'} alice's change`);
await store.close();
rmSync(dir, { recursive: true, force: true });
// the daemon's socket under one user's floods (connections, unread answers, a byte at a time)
await socketFloods();
