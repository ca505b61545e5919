// bench/store: the usage store's ingest rate (samples/s, accounting + rollups + one transaction
// per batch) and the time of a 30-day report by user for 8 GPUs × 64 processes, on 30 days of
// minute and hour rollups synthesised directly in SQL. Prints figures; never fails on time.
// Budgets (DESIGN.md §7): ingest ≥ 100k samples/s, 30-day report < 300 ms.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportToCsv } from '../electron/engine/reports/csv.js';
import { reportToHtml } from '../electron/engine/reports/html.js';
import { queryUsage } from '../electron/engine/reports/query.js';
import { CONTRIBUTION_FIELDS } from '../electron/engine/store/accounting.js';
import { fakeGpu, fakeSnapshot, type FakeProcess } from '../electron/engine/store/testing/synthetic.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, UsageStore } from '../electron/engine/store/usage-store.js';

const GPUS = 8;
const PROCESSES_PER_GPU = 64;
const USERS = 16;
const TICKS = Number(process.env.BENCH_TICKS ?? 2000);
const TICKS_PER_FLUSH = Number(process.env.BENCH_TICKS_PER_FLUSH ?? 200);
const DAYS = Number(process.env.BENCH_DAYS ?? 30);

const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'gpushare-store-bench-'));
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
try {
  console.log(`bench/store: ${GPUS} GPUs × ${PROCESSES_PER_GPU} processes, ${USERS} users, Node ${process.version}, database in ${dir}`);

  // ---- ingest ----
  const now = Date.now();
  const start = now - TICKS * 1000;
  const ingestStore = await UsageStore.open({ path: join(dir, 'ingest.db'), flushIntervalMs: 1000, now: () => now });
  const gpus = Array.from({ length: GPUS }, (_, i) => fakeGpu(i));
  const procs: FakeProcess[] = [];
  for (let g = 0; g < GPUS; g++) {
    for (let i = 0; i < PROCESSES_PER_GPU; i++) procs.push({ pid: 10_000 + g * PROCESSES_PER_GPU + i, gpu: g, user: `user${(g * PROCESSES_PER_GPU + i) % USERS}`, sm: 0, mem: 0 });
  }
  const snapshots = Array.from({ length: TICKS }, (_, k) => {
    for (const p of procs) {
      p.sm = (p.pid * 7 + k * 13) % 101;
      p.mem = ((p.pid + k) % 32) * 64 * 2 ** 20;
    }
    return fakeSnapshot(k, start + k * 1000, gpus, procs);
  });
  let tickNs = 0n;
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < TICKS; k++) {
    const s = process.hrtime.bigint();
    ingestStore.ingest(snapshots[k]);
    tickNs += process.hrtime.bigint() - s;
    if ((k + 1) % TICKS_PER_FLUSH === 0) await ingestStore.flush();
  }
  await ingestStore.flush();
  const ingestS = Number(process.hrtime.bigint() - t0) / 1e9;
  const samples = TICKS * GPUS * PROCESSES_PER_GPU;
  console.log(`ingest: ${fmt(samples)} samples in ${fmt(ingestS, 2)} s = ${fmt(samples / ingestS)} samples/s (budget ≥ 100,000/s); ` +
    `batches of ${fmt(TICKS_PER_FLUSH * GPUS * PROCESSES_PER_GPU)} samples; the tick's own cost: ${fmt(Number(tickNs) / TICKS / 1000, 1)} µs per ingest()`);
  await ingestStore.close();
  console.log(`        database ${fmt(statSync(join(dir, 'ingest.db')).size / 2 ** 20, 1)} MiB after ${fmt(samples)} raw samples (plus their rollups)`);

  // ---- a 30-day report on synthesised rollups ----
  const reportStore = await UsageStore.open({ path: join(dir, 'report.db'), now: () => now });
  const db = reportStore.db;
  const end = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  const minutes = DAYS * 24 * 60;
  const first = end - minutes * MINUTE_MS;
  const s0 = process.hrtime.bigint();
  // one row per minute per process: SM% and memory vary by minute and process; job p<pid>
  const values = {
    gpuSJob: '60', gpuSUser: "CASE WHEN p % 16 = p % 64 THEN 60 ELSE 0 END", gpuSGpu: 'CASE WHEN p % 64 = 0 THEN 60 ELSE 0 END',
    smS: '((p * 7 + m * 13) % 101) * 0.6', memGiBH: `((p + m) % 32) * 64.0 / 1024 / 60`, peakJob: `((p + m) % 32) * 67108864`,
    peakUser: `((p + m) % 32) * 67108864`, peakGpu: `CASE WHEN p % 64 = 0 THEN 32 * 67108864 ELSE 0 END`,
    contSJob: '60', contSUser: "CASE WHEN p % 16 = p % 64 THEN 60 ELSE 0 END", contSGpu: 'CASE WHEN p % 64 = 0 THEN 60 ELSE 0 END',
  } satisfies Record<(typeof CONTRIBUTION_FIELDS)[number], string>;
  await db.exec('BEGIN');
  await db.run(
    `WITH RECURSIVE m(m) AS (SELECT 0 UNION ALL SELECT m + 1 FROM m WHERE m + 1 < ${minutes}),
       p(p) AS (SELECT 0 UNION ALL SELECT p + 1 FROM p WHERE p + 1 < ${GPUS * PROCESSES_PER_GPU})
     INSERT INTO usage_minute (bucket, gpu, user, job, samples, seconds, ${CONTRIBUTION_FIELDS.join(', ')})
     SELECT ${first} + m * ${MINUTE_MS}, p / ${PROCESSES_PER_GPU}, 'user' || (p % ${USERS}), 'p' || (10000 + p), 60, 60, ${CONTRIBUTION_FIELDS.map((f) => values[f]).join(', ')}
     FROM m, p`,
  );
  await db.run(
    `INSERT INTO usage_hour (bucket, gpu, user, job, samples, seconds, ${CONTRIBUTION_FIELDS.join(', ')})
     SELECT (bucket / ${HOUR_MS}) * ${HOUR_MS} AS h, gpu, user, job, sum(samples), sum(seconds),
       ${CONTRIBUTION_FIELDS.map((f) => (f.startsWith('peak') ? `max(${f})` : `sum(${f})`)).join(', ')}
     FROM usage_minute GROUP BY h, gpu, user, job`,
  );
  await db.run(
    `INSERT INTO usage_day (bucket, gpu, user, job, samples, seconds, ${CONTRIBUTION_FIELDS.join(', ')})
     SELECT (bucket / ${DAY_MS}) * ${DAY_MS} AS d, gpu, user, job, sum(samples), sum(seconds),
       ${CONTRIBUTION_FIELDS.map((f) => (f.startsWith('peak') ? `max(${f})` : `sum(${f})`)).join(', ')}
     FROM usage_hour GROUP BY d, gpu, user, job`,
  );
  await db.exec('COMMIT');
  const rows = (await db.get<{ n: number }>('SELECT count(*) AS n FROM usage_minute'))!.n;
  const hourRows = (await db.get<{ n: number }>('SELECT count(*) AS n FROM usage_hour'))!.n;
  const dayRows = (await db.get<{ n: number }>('SELECT count(*) AS n FROM usage_day'))!.n;
  console.log(`synthesised ${fmt(rows)} minute, ${fmt(hourRows)} hour and ${fmt(dayRows)} day rollups (${DAYS} days) in ${fmt(Number(process.hrtime.bigint() - s0) / 1e9, 1)} s`);

  const since = now - DAYS * 24 * HOUR_MS;
  await queryUsage(db, { since, until: now, by: 'user', now }); // warm the page cache once
  const runs: number[] = [];
  let rowsOut = 0;
  for (let i = 0; i < 5; i++) {
    const q0 = process.hrtime.bigint();
    const report = await queryUsage(db, { since, until: now, by: 'user', now });
    runs.push(Number(process.hrtime.bigint() - q0) / 1e6);
    rowsOut = report.rows.length;
    if (i === 0) {
      // the planned report (days, hours, minutes) against a plain sum of the minute rollups over the same whole minutes
      const direct = (await db.get<{ s: number }>('SELECT sum(gpuSUser) AS s FROM usage_minute WHERE bucket >= ? AND bucket < ?', [Math.ceil(since / MINUTE_MS) * MINUTE_MS, now]))!.s;
      if (Math.abs(report.totals.gpuSeconds - direct) > 1e-6 * direct) console.log(`        CHECK FAILED: GPU seconds ${report.totals.gpuSeconds} ≠ ${direct} from the minute rollups`);
    }
    if (i === 0) {
      const r0 = process.hrtime.bigint();
      reportToCsv(report);
      reportToHtml(report);
      console.log(`        CSV + HTML of that report: ${fmt(Number(process.hrtime.bigint() - r0) / 1e6, 1)} ms (${report.resolution} data, chart every ${report.series.bucketMs / HOUR_MS} h)`);
    }
  }
  runs.sort((a, b) => a - b);
  console.log(`${DAYS}-day report by user (${rowsOut} users, 512 jobs): median ${fmt(runs[2], 1)} ms, best ${fmt(runs[0], 1)} ms, worst ${fmt(runs[4], 1)} ms (budget < 300 ms)`);
  for (const by of ['job', 'gpu'] as const) {
    const q0 = process.hrtime.bigint();
    await queryUsage(db, { since, until: now, by, now });
    console.log(`${DAYS}-day report by ${by}: ${fmt(Number(process.hrtime.bigint() - q0) / 1e6, 1)} ms`);
  }
  await reportStore.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
