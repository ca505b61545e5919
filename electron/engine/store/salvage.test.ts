// A damaged usage database is kept aside whole, and what SQLite can still read is recovered into the
// fresh file: the rows of every undamaged page stay, and the notice says how and how many.
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { findSqliteCli, salvageInto } from './salvage.js';
import { SqliteDb } from './sqlite.js';
import { fakeGpu, fakeTicks, type FakeProcess } from './testing/synthetic.js';
import { UsageStore } from './usage-store.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-salvage-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;

const T0 = Date.UTC(2026, 0, 5, 9);
const PROCESSES: FakeProcess[] = Array.from({ length: 8 }, (_, i) => ({ pid: 200 + i, gpu: i % 2, user: 'grace', sm: 10, mem: 2 ** 30 }));
const TICKS = 200;

/** A database of TICKS × 8 samples, closed (its WAL checkpointed into the file). */
async function databaseWithRows(): Promise<string> {
  const path = join(mkdtempSync(join(dir, `db-${++count}-`)), 'usage.db');
  const store = await UsageStore.open({ path, now: () => T0, flushIntervalMs: 1000, onNotice: () => undefined });
  const next = fakeTicks(1000);
  for (let i = 0; i < TICKS; i++) store.ingest(next(T0 + i * 1000, [fakeGpu(0), fakeGpu(1)], PROCESSES));
  await store.flush();
  await store.close();
  return path;
}

const u32 = (b: Buffer, at: number): number => b.readUInt32BE(at);

/**
 * Zero the samples table's rightmost leaf page (the next insert reads it) and return how many rows it held.
 * Walks the b-tree from its root page by each interior page's right-most pointer, as SQLite does to append.
 */
async function damageNewestSamplesPage(path: string): Promise<number> {
  const db = await SqliteDb.open(path, { readOnly: true });
  const root = (await db.get<{ rootpage: number }>("SELECT rootpage FROM sqlite_master WHERE name = 'samples'"))!.rootpage;
  const pageSize = (await db.get<{ page_size: number }>('PRAGMA page_size'))!.page_size;
  await db.close();
  const fd = openSync(path, 'r+');
  try {
    const page = Buffer.alloc(pageSize);
    for (let number = root; ; ) {
      readSync(fd, page, 0, pageSize, (number - 1) * pageSize);
      const header = number === 1 ? 100 : 0;
      const type = page[header];
      if (type === 0x05) {
        number = u32(page, header + 8); // interior table page: its right-most child
        continue;
      }
      assert.equal(type, 0x0d, `page ${number} is a table leaf`);
      const cells = page.readUInt16BE(header + 3);
      writeSync(fd, Buffer.alloc(pageSize), 0, pageSize, (number - 1) * pageSize);
      return cells;
    }
  } finally {
    closeSync(fd);
  }
}

const samplesIn = async (path: string): Promise<number> => {
  const db = await SqliteDb.open(path, { readOnly: true });
  try {
    return (await db.get<{ n: number }>('SELECT count(*) AS n FROM samples'))!.n;
  } finally {
    await db.close();
  }
};

test('a write that meets a damaged page: the file is kept aside byte for byte, every undamaged page\'s rows are recovered, and the batch is written after', async () => {
  const path = await databaseWithRows();
  const lost = await damageNewestSamplesPage(path);
  assert.ok(lost > 0 && lost < TICKS * PROCESSES.length / 4, `one page of a few dozen rows is damaged (${lost})`);
  const damaged = readFileSync(path);

  const notices: string[] = [];
  const store = await UsageStore.open({ path, now: () => T0, flushIntervalMs: 1000, onNotice: (m) => notices.push(m) });
  const next = fakeTicks(1000);
  store.ingest(next(T0 + TICKS * 1000, [fakeGpu(0), fakeGpu(1)], PROCESSES));
  await store.flush(); // the insert reads the damaged page: SQLITE_CORRUPT
  await store.flush(); // the kept batch goes into the fresh file
  const kept = TICKS * PROCESSES.length - lost;
  // Debian 12's sqlite3 3.40 fails .recover even on a sound file ("SQL logic error"): the notice says so and which way ran
  const method = "(sqlite3's \\.recover|a row-by-row salvage \\((no sqlite3 command|sqlite3's \\.recover failed: .+)\\))";
  assert.equal(notices.length, 1, notices.join('\n'));
  assert.match(notices[0], new RegExp(`is damaged \\(.*malformed.*\\); kept it as .*usage\\.db\\.corrupt-.* and started a fresh one\\. Recovered ${kept} of its samples .*with ${method}`));
  assert.equal(await store.db.get<{ n: number }>('SELECT count(*) AS n FROM samples').then((r) => r!.n), kept + PROCESSES.length);
  const minute = await store.db.get<{ n: number }>('SELECT sum(samples) AS n FROM usage_minute');
  assert.equal(minute!.n, TICKS * PROCESSES.length + PROCESSES.length, 'the rollups (undamaged pages) are recovered whole, and count the new batch');
  await store.close();
  const aside = readdirSync(join(path, '..')).filter((f) => /^usage\.db\.corrupt-[^.]*$/.test(f) || /^usage\.db\.corrupt-.*Z$/.test(f));
  assert.equal(aside.length, 1, readdirSync(join(path, '..')).join(', '));
  assert.ok(readFileSync(join(path, '..', aside[0])).equals(damaged), 'the damaged file is kept as it was');
});

test('without the sqlite3 command, a row-by-row salvage keeps the rows of every readable page and skips the damaged range', async () => {
  const path = await databaseWithRows();
  const lost = await damageNewestSamplesPage(path);
  const fresh = join(path, '..', 'fresh.db');
  const said = await salvageInto(path, fresh, { cli: null });
  assert.equal(await samplesIn(fresh), TICKS * PROCESSES.length - lost);
  assert.match(said, new RegExp(`^Recovered ${TICKS * PROCESSES.length - lost} of its samples .*with a row-by-row salvage \\(no sqlite3 command\\)`));
});

test('a file that is not a database at all: nothing is recovered, and the notice says so', async () => {
  const sub = mkdtempSync(join(dir, 'garbage-'));
  const path = join(sub, 'usage.db');
  const fd = openSync(path, 'w');
  writeSync(fd, Buffer.from('garbage, not SQLite '.repeat(300)));
  closeSync(fd);
  const said = await salvageInto(path, join(sub, 'fresh.db'), { cli: findSqliteCli() });
  assert.match(said, /^Nothing could be recovered from it \(.+\)\.$/);
  assert.equal(await samplesIn(join(sub, 'fresh.db')), 0);
});
