// The usage store when its disk fails: batches that could not be written are kept (bounded) and
// written once the disk takes writes again, the oldest dropped and counted past the bound, and the
// store says that usage is not being recorded, why and where — once, not every flush.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { storeTrouble, type StoreStatus } from '../../../shared/store-status.js';
import { fakeGpu, fakeTicks, type FakeProcess } from './testing/synthetic.js';
import { UsageStore } from './usage-store.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-store-faults-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let dbCount = 0;
const freshPath = (): string => join(dir, `usage-${++dbCount}.db`);

const T0 = Date.UTC(2026, 0, 5, 9);
const PROCESSES: FakeProcess[] = [1, 2, 3, 4].map((pid) => ({ pid: 100 + pid, gpu: pid % 2, user: 'ada', sm: 25, mem: 2 ** 30 }));
/** What SQLite answers on a full disk. */
const diskFull = (): Error => Object.assign(new Error('SQLITE_FULL: database or disk is full'), { code: 'SQLITE_FULL' });

interface FaultyStore {
  store: UsageStore;
  notices: string[];
  heard: StoreStatus[];
  /** While true, every batch fails as on a full disk. */
  full: { on: boolean };
  /** Record tick i (one sample per process, t = T0 + i s) and flush. */
  tick(i: number): Promise<void>;
  samplesAt(): Promise<number[]>;
}

async function faultyStore(options: { keptSamples?: number } = {}): Promise<FaultyStore> {
  const notices: string[] = [];
  const heard: StoreStatus[] = [];
  const full = { on: false };
  const path = freshPath();
  const store = await UsageStore.open({ path, now: () => T0, flushIntervalMs: 1000, onNotice: (m) => notices.push(m), writeFault: () => (full.on ? diskFull() : null), ...options });
  store.onStatus((s) => heard.push(s));
  const next = fakeTicks(1000);
  return {
    store,
    notices,
    heard,
    full,
    async tick(i) {
      store.ingest(next(T0 + i * 1000, [fakeGpu(0), fakeGpu(1)], PROCESSES));
      await store.flush();
    },
    samplesAt: async () => (await store.db.all<{ t: number }>('SELECT DISTINCT t FROM samples ORDER BY t')).map((r) => (r.t - T0) / 1000),
  };
}

test('15 s of a full disk: every sample is kept and written after recovery; the trouble is said once, then its end', async () => {
  const f = await faultyStore();
  await f.tick(0);
  f.full.on = true;
  for (let i = 1; i <= 15; i++) await f.tick(i);
  const during = f.store.status();
  assert.equal(during.recording, false);
  assert.equal(during.keptSamples, 15 * PROCESSES.length);
  assert.equal(during.droppedSamples, 0);
  assert.match(during.problem!, /writes fail \(SQLITE_FULL: database or disk is full\)/);
  assert.equal(storeTrouble(during)!.startsWith(`Usage is not being recorded: writes fail (SQLITE_FULL: database or disk is full), ${f.store.path}.`), true);
  assert.deepEqual(await f.samplesAt(), [0], 'nothing reached the file while the disk was full');
  assert.equal(f.heard.length, 1, 'one status change for the onset, not one per failed flush');
  assert.equal(f.notices.length, 1);
  assert.ok(f.notices[0].startsWith(`Usage is not being recorded: writes fail (SQLITE_FULL: database or disk is full), ${f.store.path}. 4 samples are kept in memory`), f.notices[0]);

  f.full.on = false;
  await f.tick(16);
  assert.deepEqual(await f.samplesAt(), Array.from({ length: 17 }, (_, i) => i), 'every second is in the file, in order');
  const minute = await f.store.db.get<{ samples: number }>('SELECT sum(samples) AS samples FROM usage_minute');
  assert.equal(minute!.samples, 17 * PROCESSES.length, 'the rollups count them too');
  assert.deepEqual(f.store.status(), { path: f.store.path, recording: true, problem: null, since: null, keptSamples: 0, droppedSamples: 0 });
  assert.equal(f.heard.length, 2);
  assert.equal(f.heard[1].recording, true);
  assert.match(f.notices[1], /^Usage is recorded again in .*: the 60 samples kept since .* are written\.$/);
  await f.store.close();
});

test('past the bound the oldest samples are dropped first and counted; the newest are written after recovery', async () => {
  const f = await faultyStore({ keptSamples: 5 * PROCESSES.length });
  f.full.on = true;
  for (let i = 0; i < 8; i++) await f.tick(i);
  const during = f.store.status();
  assert.equal(during.keptSamples, 5 * PROCESSES.length);
  assert.equal(during.droppedSamples, 3 * PROCESSES.length);
  assert.match(storeTrouble(during)!, /12 older samples were dropped\.$/);
  assert.equal(f.heard.length, 2, 'the onset, and the first drop');
  f.full.on = false;
  await f.tick(8);
  assert.deepEqual(await f.samplesAt(), [3, 4, 5, 6, 7, 8]);
  assert.equal(f.store.status().droppedSamples, 12, 'the count stays: those samples are gone for good');
  await f.store.close();
});

test('a database that cannot be opened: the store runs, says so naming the path, keeps samples, and writes them once it opens', async () => {
  const path = join(dir, 'in-the-way', 'usage.db');
  mkdirSync(path, { recursive: true }); // a directory where the file should be: SQLite cannot open it, whoever runs the test
  const notices: string[] = [];
  await assert.rejects(UsageStore.open({ path, onNotice: () => undefined }), 'by default an unopenable file still throws (a report)');
  const store = await UsageStore.open({ path, now: () => T0, flushIntervalMs: 1000, whenUnopenable: 'record-later', onNotice: (m) => notices.push(m) });
  const status = store.status();
  assert.equal(status.recording, false);
  assert.match(status.problem!, /^it cannot be opened \(.+\)$/);
  assert.equal(notices.length, 1);
  assert.ok(notices[0].startsWith('Usage is not being recorded: it cannot be opened (') && notices[0].includes(`), ${path}.`), notices[0]);
  assert.throws(() => store.db, new RegExp(`The usage database ${path} is not open: it cannot be opened`));
  const next = fakeTicks(1000);
  store.ingest(next(T0, [fakeGpu(0)], PROCESSES));
  await store.flush();
  assert.equal(store.status().keptSamples, PROCESSES.length);
  rmSync(path, { recursive: true });
  store.ingest(next(T0 + 1000, [fakeGpu(0)], PROCESSES));
  await store.flush();
  assert.equal(store.status().recording, true);
  const rows = await store.db.get<{ n: number }>('SELECT count(*) AS n FROM samples');
  assert.equal(rows!.n, 2 * PROCESSES.length, 'the samples from before it opened are there');
  await store.close();
});
