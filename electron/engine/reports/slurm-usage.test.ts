// Slurm jobs' usage rows in the usage store: the migration that adds their table, the store's batching path
// that writes them, the report's range and bound, and the one-time import of an earlier gpushare's JSON-lines file.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { SlurmUsageRow } from '../../../shared/slurm.js';
import { migrate, MIGRATIONS, SCHEMA_VERSION } from '../store/migrations.js';
import { SqliteDb } from '../store/sqlite.js';
import { UsageStore } from '../store/usage-store.js';
import { slurmUsageCsv } from '../../../shared/slurm-usage-report.js';
import { csvField } from '../../../shared/usage-report-csv.js';
import { importLegacySlurmUsage, parseLegacySlurmUsage, readSlurmUsage } from './slurm-usage.js';
import { slurmReportToHtml } from './slurm-html.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-slurm-usage-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => join(dir, `usage-${++n}.db`);
const T = Date.UTC(2026, 10, 1, 9);
const row = (jobId: string, end: number, extra: Partial<SlurmUsageRow> = {}): SlurmUsageRow => ({
  jobId, user: 'alice', partition: 'gpu', qos: null, start: end - 60_000, end, gpuHours: 1 / 60, smHours: 0.5 / 60, memoryGiBHours: 2 / 60, peakMemoryBytes: 2 * 1024 ** 3, gatedSeconds: 3.25, parkedSeconds: 0, account: 'lab', gpus: 'GPU 0', ...extra,
});

test('a store from before Slurm rows (schema 4) is migrated: the slurm_usage table is added, older rows untouched', async () => {
  const path = fresh();
  const db = await SqliteDb.open(path);
  for (const step of MIGRATIONS.slice(0, 4)) await step(db);
  await db.exec('PRAGMA user_version = 4');
  await db.run("INSERT INTO events (at, kind, message, severity) VALUES (1, 'idle', 'kept', 'info')");
  await migrate(db);
  assert.equal((await db.get<{ user_version: number }>('PRAGMA user_version'))?.user_version, SCHEMA_VERSION);
  assert.deepEqual(await db.all('SELECT jobId FROM slurm_usage'), []);
  assert.deepEqual(await db.all('SELECT message FROM events'), [{ message: 'kept' }]);
  await db.close();
});

test('a store with Slurm rows and samples (schema 5) is migrated to 6: its rows read back unchanged, account and GPUs null (shown "–"), its samples\' GPU time as before', async () => {
  const path = fresh();
  const db = await SqliteDb.open(path);
  for (const step of MIGRATIONS.slice(0, 5)) await step(db);
  await db.exec('PRAGMA user_version = 5');
  const old = row('60', T, { account: null, gpus: null });
  const { account: _a, gpus: _g, ...schema5 } = old;
  await db.run(`INSERT INTO slurm_usage (${Object.keys(schema5).join(', ')}) VALUES (${Object.keys(schema5).map(() => '?').join(', ')})`, Object.values(schema5));
  // a sample of 2 jobs on GPU 0 for 4 s, first of its job, user and GPU: 2 s for its job and user, 4 s for the GPU
  await db.run("INSERT INTO samples (t, gpu, pid, user, job, smPercent, usedMemory, dt, flags, peakJob, peakUser, peakGpu) VALUES (?, 0, 7, 'alice', 'p7', 50, 0, 4, ?, 0, 0, 0)", [T, 1 | 2 | 4 | (2 << 8) | (1 << 19)]);
  await migrate(db);
  assert.equal((await db.get<{ user_version: number }>('PRAGMA user_version'))?.user_version, 6);
  assert.deepEqual((await readSlurmUsage(db, { since: T - 1, until: T + 1, now: T })).rows, [old]);
  const { CONTRIBUTION_SQL } = await import('../store/accounting.js');
  assert.deepEqual(await db.get(`SELECT ${CONTRIBUTION_SQL.gpuSJob} AS job, ${CONTRIBUTION_SQL.gpuSUser} AS user, ${CONTRIBUTION_SQL.gpuSGpu} AS gpu FROM samples`), { job: 2, user: 2, gpu: 4 });
  assert.equal(slurmUsageCsv([old]).split('\n')[1].endsWith(',0.000,,'), true, 'its Account and GPUs cells are empty');
  await db.close();
});

test("the epilog's rows go through the store's batch: in the database after a flush, read back by range, oldest end first", async () => {
  const store = await UsageStore.open({ path: fresh(), flushIntervalMs: 1000 });
  store.recordSlurmUsage(row('12', T + 2000, { user: 'bob', qos: 'high', partition: null }));
  store.recordSlurmUsage(row('11', T + 1000));
  store.recordSlurmUsage(row('10', T - 1000));
  assert.deepEqual((await readSlurmUsage(store.db, { since: T - 60_000, until: T + 60_000, now: T })).rows, [], 'recorded, not yet written');
  await store.flush();
  const report = await readSlurmUsage(store.db, { since: T, until: T + 60_000, now: T });
  assert.deepEqual(report.rows, [row('11', T + 1000), row('12', T + 2000, { user: 'bob', qos: 'high', partition: null })], 'job 10 ended before the range');
  assert.equal(report.leftOut, 0);
  const bounded = await readSlurmUsage(store.db, { since: T - 60_000, until: T + 60_000, now: T, maxRows: 2 });
  assert.deepEqual([bounded.rows.map((r) => r.jobId), bounded.leftOut], [['11', '12'], 1], 'the newest kept, the rest counted');
  await assert.rejects(readSlurmUsage(store.db, { since: T, until: T - 1, now: T }), /until: must be after since/);
  const csv = slurmUsageCsv(report.rows);
  assert.equal(csv.split('\n')[1], `11,alice,gpu,,${new Date(T - 59_000).toISOString()},${new Date(T + 1000).toISOString()},0.016667,0.008333,0.033333,2.000,3.250,0.000,lab,GPU 0`);
  assert.equal(slurmUsageCsv([row('13', T, { gpus: 'GPU 0, GPU 1 · 3g.40gb' })]).split('\n')[1].split(',').length, 15, 'a list of GPUs is one quoted cell');
  assert.match(slurmUsageCsv([row('13', T, { gpus: 'GPU 0, GPU 1 · 3g.40gb' })]), /,lab,"GPU 0, GPU 1 · 3g\.40gb"\n$/);
  await store.close();
});

test('asked with no end, the range runs up to now and includes a job that ended now (an epilog and a report in the same millisecond)', async () => {
  const store = await UsageStore.open({ path: fresh(), flushIntervalMs: 1000 });
  store.recordSlurmUsage(row('14', T));
  await store.flush();
  assert.deepEqual((await readSlurmUsage(store.db, { since: T - 60_000, now: T })).rows.map((r) => r.jobId), ['14']);
  await store.close();
});

test('a row a failed flush could not write is kept and written with the next flush that works', async () => {
  let failing = true;
  const store = await UsageStore.open({ path: fresh(), flushIntervalMs: 1000, onNotice: () => undefined, writeFault: () => (failing ? new Error('disk full') : null) });
  store.recordSlurmUsage(row('20', T));
  await store.flush();
  assert.equal(store.status().recording, false);
  failing = false;
  await store.flush();
  assert.deepEqual((await readSlurmUsage(store.db, { since: T - 1, until: T + 1, now: T })).rows.map((r) => r.jobId), ['20']);
  await store.close();
});

test("an earlier gpushare's slurm-usage.jsonl is imported once and renamed aside; imported again (a crash before the rename) nothing is counted twice; a cut line is left out and said", async () => {
  const store = await UsageStore.open({ path: fresh() });
  const file = join(dir, 'slurm-usage.jsonl');
  const legacy = (r: SlurmUsageRow): string => JSON.stringify({ ...r, account: undefined, gpus: undefined }); // an earlier gpushare kept neither
  const lines = `${legacy(row('30', T))}\n${legacy(row('31', T + 5))}\n{"jobId":"32","us`;
  writeFileSync(file, lines);
  assert.match((await importLegacySlurmUsage(store, file))!, /^Imported 2 Slurm job usage rows from .*slurm-usage\.jsonl into the usage store \(0 already there; 1 line was not a row \(cut short\) and was left out\); the file is kept as .*slurm-usage\.jsonl\.imported\.$/);
  assert.equal(existsSync(file), false);
  assert.equal(readFileSync(`${file}.imported`, 'utf8'), lines);
  writeFileSync(file, lines);
  assert.match((await importLegacySlurmUsage(store, file))!, /^Imported 0 Slurm job usage rows .*\(2 already there; .*kept as .*slurm-usage\.jsonl\.imported\.2\.$/);
  assert.deepEqual((await readSlurmUsage(store.db, { since: T - 1, until: T + 10, now: T })).rows, [row('30', T, { account: null, gpus: null }), row('31', T + 5, { account: null, gpus: null })]);
  assert.equal(await importLegacySlurmUsage(store, file), null, 'no file: nothing to do');
  await store.close();
});

test('a store that cannot take the rows leaves the file where it was, for the next start', async () => {
  const notADir = join(dir, 'not-a-folder');
  writeFileSync(notADir, '');
  const store = await UsageStore.open({ path: join(notADir, 'usage.db'), whenUnopenable: 'record-later', onNotice: () => undefined });
  const file = join(dir, 'left.jsonl');
  writeFileSync(file, JSON.stringify(row('40', T)) + '\n');
  await assert.rejects(importLegacySlurmUsage(store, file), /usage\.db is not open/);
  assert.ok(existsSync(file));
  await store.close();
});

test('a legacy line whose fields are not a row (wrong types) is left out, not half-imported', () => {
  const { rows, skipped } = parseLegacySlurmUsage(`${JSON.stringify({ ...row('50', T), gpuHours: 'lots' })}\n${JSON.stringify({ ...row('51', T), extra: 1 })}\n`);
  assert.deepEqual([rows, skipped], [[row('51', T)], 1]);
});

test("a name a spreadsheet would read as a formula (an account chosen with sbatch --account where Slurm enforces none) is written as text; figures stay numbers", () => {
  // the daemon takes account, partition and QOS names of letters, digits and _ . + -: '+', '-' may lead, so a cell may start a formula
  const line = slurmUsageCsv([row('14', T, { account: '-2+A1', partition: '+A2', qos: 'normal' })]).split('\n')[1].split(',');
  assert.deepEqual([line[2], line[3], line[12]], ["'+A2", 'normal', "'-2+A1"]);
  assert.equal(line[6], '0.016667', 'a figure is not touched');
});

test("the usage report's CSV writes a key or label a spreadsheet would read as a formula as text, a lone '-' (no container) and figures as they are", () => {
  const at = (key: string, label: string) => csvField(key) + ',' + csvField(label);
  assert.equal(at('=HYPERLINK("http://x")', '@SUM(1)'), `"'=HYPERLINK(""http://x"")",'@SUM(1)`);
  assert.equal(at('-', '+1'), "-,'+1");
  assert.equal(at('\tcmd', 'ok'), "'\tcmd,ok");
  assert.equal(csvField(-1.5), '-1.5');
});

test('the Slurm HTML report shows names holding markup as text: no element of theirs reaches the page', () => {
  const hostile = row('15', T, { account: '</td><script>alert(1)</script>', gpus: 'GPU 0 · <img src=x>', user: 'bob"><b>' });
  const html = slurmReportToHtml({ by: 'slurm-job', since: T - 120_000, until: T + 1, rows: [hostile], leftOut: 0 });
  assert.doesNotMatch(html, /<script|<img|bob"><b>/);
  assert.match(html, /bob&quot;&gt;&lt;b&gt;/);
  assert.match(html, /<td>&lt;\/td&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/td>/);
  assert.match(html, /<td>GPU 0 · &lt;img src=x&gt;<\/td>/);
});
