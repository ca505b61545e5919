// bench/refused: what refused requests cost the engine. 600 jobs.submit of 900 KB each (an
// argument past its bound) and 600 requests nested 20,000 levels deep, through the dispatcher with
// the usage store attached: the time per request, the engine's heap and RSS, and the database's size
// before and after. Before issue 16 the same 600 submits grew RSS to 2 GB and the database by 1 GB
// (raw params kept in the audit log). Prints figures; never fails on time.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../electron/engine/engine.js';
import { attachUsageStore } from '../electron/engine/store/attach.js';
import { noGpus } from '../electron/engine/store/testing/synthetic.js';
import { UsageStore } from '../electron/engine/store/usage-store.js';

const COUNT = Number(process.env.BENCH_COUNT ?? 600);
const MiB = 2 ** 20;

const dir = mkdtempSync(join(tmpdir(), 'gpushare-bench-refused-'));
const path = join(dir, 'usage.db');
const engine = new Engine({ nvml: noGpus, simulated: null, close: () => undefined });
const store = await UsageStore.open({ path, onNotice: (m) => console.log(`store: ${m}`) });
attachUsageStore(engine, store);

const dbBytes = (): number => ['', '-wal'].reduce((sum, suffix) => sum + (statSync(path + suffix, { throwIfNoEntry: false })?.size ?? 0), 0);
const memory = (): string => {
  const m = process.memoryUsage();
  return `RSS ${(m.rss / MiB).toFixed(0)} MiB, heap ${(m.heapUsed / MiB).toFixed(0)} MiB`;
};

async function refuse(label: string, params: unknown): Promise<void> {
  globalThis.gc?.();
  const before = { memory: memory(), db: dbBytes() };
  const start = performance.now();
  let refused = 0;
  for (let i = 0; i < COUNT; i++) {
    await engine.call('jobs.submit', params as never).catch(() => refused++);
  }
  const ms = (performance.now() - start) / COUNT;
  await store.flush();
  globalThis.gc?.();
  let audited: string;
  try {
    audited = `audit.list answers ${(JSON.stringify(engine.dispatcher.auditLog(COUNT)).length / 1024).toFixed(0)} KiB`;
  } catch (error) {
    audited = `audit.list cannot be answered: ${(error as Error).message}`;
  }
  console.log(`${label}: ${refused}/${COUNT} refused, ${ms.toFixed(2)} ms each; before: ${before.memory}, db ${(before.db / MiB).toFixed(2)} MiB; after: ${memory()}, db ${(dbBytes() / MiB).toFixed(2)} MiB; ${audited}`);
}

const deep = (depth: number): unknown => {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

console.log(`node ${process.version}${globalThis.gc ? ', --expose-gc' : ''}`);
await refuse('900 KB submits', { argv: ['x'.repeat(900_000)], gpu: 'auto' });
await refuse('20,000-deep submits', { argv: deep(20_000), gpu: 'auto' });
await store.close();
rmSync(dir, { recursive: true, force: true });
