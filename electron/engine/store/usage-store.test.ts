// The usage store's accounting on synthetic streams with known answers.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { UsageReport, UsageRow } from '../../../shared/usage-report.js';
import { queryUsage, type Resolution } from '../reports/query.js';
import { SCHEMA_VERSION } from './migrations.js';
import { KNOWN_T as T, writeKnownStream } from './testing/known-stream.js';
import type { ProcStatus } from '../proc/proc-status.js';
import { JobOwnership } from '../scheduler/ownership.js';
import { fakeGpu, fakeMigGpu, fakeSnapshot, fakeTicks, random, type FakeProcess } from './testing/synthetic.js';
import { defaultUsageDbPath, HOUR_MS, UsageStore } from './usage-store.js';

const GiB = 2 ** 30;
const dir = mkdtempSync(join(tmpdir(), 'gpushare-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let dbCount = 0;
const freshPath = (): string => join(dir, `usage-${++dbCount}.db`);
const gpus = [fakeGpu(0), fakeGpu(1)];
const storeWithKnownStream = (path = freshPath()): Promise<UsageStore> => writeKnownStream(path);

const row = (report: UsageReport, key: string): UsageRow => {
  const found = report.rows.find((r) => r.key === key);
  assert.ok(found, `a row for ${key} in ${report.rows.map((r) => r.key).join(', ')}`);
  return found;
};

function assertFigures(actual: UsageRow, expected: Partial<UsageRow>): void {
  for (const [field, value] of Object.entries(expected)) {
    if (typeof value !== 'number') continue;
    const got = actual[field as keyof UsageRow] as number;
    assert.ok(Math.abs(got - (value as number)) <= 1e-9 * Math.max(1, Math.abs(value as number)), `${actual.key} ${field}: ${got} ≠ ${value}`);
  }
}

for (const resolution of ['raw', 'minute', 'hour', 'day'] as Resolution[]) {
  test(`exact accounting with a gap, read from ${resolution} data`, async () => {
    const store = await storeWithKnownStream();
    const range = { since: T - HOUR_MS, until: T + HOUR_MS, resolution, now: T + HOUR_MS };
    const byUser = await queryUsage(store.db, { ...range, by: 'user' });
    assertFigures(row(byUser, 'alice'), {
      gpuSeconds: 8.5 + 2.5 + 7, // her jobs' shares: p101 and p104 on gpu0, p103 on gpu1
      smSeconds: 0.5 * 13.5 + 0.1 * 5,
      memoryGiBHours: (2 * 13.5 + 4 * 10 + 1 * 5) / 3600,
      peakMemoryBytes: 4 * GiB,
      contentionMinutes: 10 / 60, // with bob at k 0..4, with itself (p1 + p4) at k 5..9
      queuedSeconds: 0,
    });
    assertFigures(row(byUser, 'bob'), { gpuSeconds: 2.5, smSeconds: 1.5, memoryGiBHours: 5 / 3600, peakMemoryBytes: GiB, contentionMinutes: 5 / 60 });
    assertFigures(row(byUser, 'carol'), {
      gpuSeconds: 3, smSeconds: 4.8, memoryGiBHours: 3 / 3600, peakMemoryBytes: GiB / 2, contentionMinutes: 0, queuedSeconds: 62, suspendedSeconds: 2,
    });

    const byJob = await queryUsage(store.db, { ...range, by: 'job' });
    // a GPU shared by n jobs in a tick gives each dt / n: p101 shared gpu0 for 10 of its 13.5 s
    assertFigures(row(byJob, 'p101'), { gpuSeconds: 0.5 * 10 + 3.5, smSeconds: 6.75, contentionMinutes: 10 / 60, peakMemoryBytes: 2 * GiB });
    assertFigures(row(byJob, 'p104'), { gpuSeconds: 2.5, smSeconds: 0.5, contentionMinutes: 5 / 60 });
    assertFigures(row(byJob, 'j1'), { gpuSeconds: 3, smSeconds: 4.8, queuedSeconds: 62, suspendedSeconds: 2 });
    assert.equal(row(byJob, 'j1').label, 'carol: python finetune.py --lr 3e-4, "warm"');
    assert.equal(row(byJob, 'p101').label, 'alice: python train.py --run=101');

    const byGpu = await queryUsage(store.db, { ...range, by: 'gpu' });
    assertFigures(row(byGpu, '0'), { gpuSeconds: 13.5, smSeconds: 6.75 + 1.5 + 0.5, contentionMinutes: 10 / 60, peakMemoryBytes: 3 * GiB });
    assertFigures(row(byGpu, '1'), { gpuSeconds: 10, smSeconds: 4.8, peakMemoryBytes: 4.5 * GiB, queuedSeconds: 62, suspendedSeconds: 2 });
    assert.equal(row(byGpu, '1').label, 'GPU 1 · Synthetic GPU 1');
    await store.close();
  });
}

test('rollups agree with the raw samples over any range, with gaps and churn', async () => {
  const store = await UsageStore.open({ path: freshPath(), now: () => T + 5 * HOUR_MS, onNotice: () => undefined });
  const rand = random(42);
  const users = ['alice', 'bob', 'carol', 'dave'];
  let t = T - 7 * 60_000 + 123; // ticks every 90 s (jittered) for about three days, with gaps
  let live: FakeProcess[] = [];
  let t20 = 0;
  const tick = fakeTicks(90_000);
  for (let i = 0; i < 3000; i++) {
    if (i === 20) t20 = t;
    t += rand() < 0.01 ? 300_000 + Math.floor(rand() * 3_600_000) : 90_000 + Math.floor(rand() * 30_000 - 15_000);
    if (rand() < 0.05 || live.length === 0) live.push({ pid: 1000 + i, gpu: Math.floor(rand() * 4), user: users[Math.floor(rand() * 4)], sm: 0, mem: 0 });
    if (rand() < 0.03) live.splice(Math.floor(rand() * live.length), 1);
    for (const p of live) {
      p.sm = rand() < 0.2 ? null : Math.floor(rand() * 101);
      p.mem = Math.floor(rand() * 8 * GiB);
    }
    store.ingest(tick(t, [0, 1, 2, 3].map(fakeGpu), live));
    if (i % 500 === 0) await store.flush();
  }
  await store.flush();
  const end = t;
  const ranges = [
    [T - 3 * 60_000 - 17, T + 2 * HOUR_MS + 31 * 60_000 + 5],
    [T + 12_345, T + 40 * HOUR_MS + 999],
    [T - HOUR_MS, end + 1],
    [t20 - 1234, t20 + 150_000], // within a few minutes: raw samples only
  ];
  for (const [since, until] of ranges) {
    for (const [by, seriesPoints] of [['user', 60], ['job', 60], ['gpu', 60], ['user', 5]] as const) {
      const raw = await queryUsage(store.db, { since, until, by, resolution: 'raw', now: end });
      const planned = await queryUsage(store.db, { since, until, by, now: end, seriesPoints });
      assert.deepEqual(planned.rows.map((r) => r.key).sort(), raw.rows.map((r) => r.key).sort());
      for (const r of raw.rows) assertFigures(row(planned, r.key), r);
      assert.ok(raw.rows.length > 0);
    }
  }
  const usedDays = await queryUsage(store.db, { since: T + 12_345, until: end + 1, by: 'user', now: end, seriesPoints: 5 });
  assert.equal(usedDays.series.bucketMs, 24 * HOUR_MS);
  assert.equal(usedDays.resolution, 'mixed');
  // whole days: the day, hour and minute rollups alone give the raw figures
  for (const resolution of ['minute', 'hour', 'day'] as const) {
    const range = { since: T - 10 * HOUR_MS, until: T + 62 * HOUR_MS, by: 'user' as const, now: end };
    const raw = await queryUsage(store.db, { ...range, resolution: 'raw' });
    const rolled = await queryUsage(store.db, { ...range, resolution });
    for (const r of raw.rows) assertFigures(row(rolled, r.key), r);
  }
  await store.close();
});

for (const resolution of ['raw', 'minute', 'hour', 'day'] as Resolution[]) {
  test(`GPU-hours: a MIG slice counts its share of its GPU, shared among the jobs in it; by job, user and GPU the totals agree (${resolution} data)`, async () => {
    const store = await UsageStore.open({ path: freshPath(), now: () => T + HOUR_MS });
    const tick = fakeTicks(1000);
    const box = [fakeMigGpu(0, [{ gi: 1, computeSlices: 3 }, { gi: 2, computeSlices: 1 }]), fakeGpu(1)];
    const procs: FakeProcess[] = [
      { pid: 1, gpu: 0, gi: 1, user: 'alice', sm: 10, mem: GiB }, // a 3g slice of 7, shared by two jobs
      { pid: 2, gpu: 0, gi: 1, user: 'bob', sm: 10, mem: GiB },
      { pid: 3, gpu: 0, gi: 2, user: 'alice', sm: 10, mem: GiB }, // a 1g slice of 7
      { pid: 4, gpu: 1, user: 'bob', sm: 10, mem: GiB }, // a whole GPU
    ];
    for (let k = 0; k < 2; k++) store.ingest(tick(T + k * 1000, box, procs)); // 2 s
    await store.flush();
    const range = { since: T - HOUR_MS, until: T + HOUR_MS, resolution, now: T + HOUR_MS };
    const byJob = await queryUsage(store.db, { ...range, by: 'job' });
    for (const [job, seconds] of [['p1', (3 / 7 / 2) * 2], ['p2', (3 / 7 / 2) * 2], ['p3', (1 / 7) * 2], ['p4', 2]] as const) assertFigures(row(byJob, job), { gpuSeconds: seconds });
    const byUser = await queryUsage(store.db, { ...range, by: 'user' });
    assertFigures(row(byUser, 'alice'), { gpuSeconds: (3 / 14 + 1 / 7) * 2 });
    assertFigures(row(byUser, 'bob'), { gpuSeconds: (3 / 14 + 1) * 2 });
    const byGpu = await queryUsage(store.db, { ...range, by: 'gpu' });
    assertFigures(row(byGpu, '0'), { gpuSeconds: (4 / 7) * 2, smSeconds: 0.6, peakMemoryBytes: 3 * GiB });
    assertFigures(row(byGpu, '1'), { gpuSeconds: 2 });
    for (const report of [byJob, byUser]) assertFigures({ ...report.totals, key: 'totals' } as UsageRow, { gpuSeconds: byGpu.totals.gpuSeconds });
    await store.close();
  });
}

test('the store keeps its schema version, events, audit entries and data across reopening', async () => {
  const path = freshPath();
  const store = await storeWithKnownStream(path);
  store.recordAlert({ id: 1, kind: 'contention', at: T + 3000, gpu: 0, jobId: 'p101', message: 'alice and bob share GPU 0.', severity: 'warning' });
  store.recordEvent({ kind: 'parked', at: T + 4000, jobId: 'j1', message: 'j1 parked: GPU 1 is needed by a high-priority job.' });
  store.recordAudit({ id: 1, at: T + 4000, who: 'alice', what: 'jobs.suspend', params: { job: 'j1' }, result: 'ok' });
  await store.close();
  const again = await UsageStore.open({ path, now: () => T + HOUR_MS });
  assert.equal((await again.db.get<{ user_version: number }>('PRAGMA user_version'))?.user_version, SCHEMA_VERSION);
  assert.equal((await again.db.get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode, 'wal');
  const report = await queryUsage(again.db, { since: T - HOUR_MS, until: T + HOUR_MS, by: 'user', now: T + HOUR_MS });
  assertFigures(row(report, 'bob'), { gpuSeconds: 2.5 });
  assert.deepEqual(report.events.map((e) => [e.kind, e.jobId, e.severity]), [['contention', 'p101', 'warning'], ['parked', 'j1', 'info']]);
  assert.deepEqual(await again.db.all('SELECT who, what, params, result FROM audit'), [{ who: 'alice', what: 'jobs.suspend', params: '{"job":"j1"}', result: 'ok' }]);
  await again.close();
});

test('raw samples older than their retention are dropped; the rollups keep the figures', async () => {
  let now = T + HOUR_MS;
  const store = await UsageStore.open({ path: freshPath(), now: () => now, retention: { rawMs: 10 * 60_000 } });
  const tick = fakeTicks(1000);
  for (let k = 0; k < 10; k++) store.ingest(tick(T + k * 1000, gpus, [{ pid: 7, gpu: 0, user: 'erin', sm: 100, mem: GiB }]));
  await store.flush();
  await store.prune(now);
  assert.equal((await store.db.get<{ n: number }>('SELECT count(*) AS n FROM samples'))?.n, 0);
  const report = await queryUsage(store.db, { since: T - HOUR_MS, until: now, by: 'user', now });
  assertFigures(row(report, 'erin'), { gpuSeconds: 10, smSeconds: 10 });
  now = T + 400 * 24 * HOUR_MS;
  await store.prune(now);
  assert.equal((await store.db.get<{ n: number }>('SELECT count(*) AS n FROM usage_hour'))?.n, 0);
  await store.close();
});

test('a damaged database file is kept aside with a clear message and a fresh one starts', async () => {
  const sub = mkdtempSync(join(dir, 'corrupt-'));
  const path = join(sub, 'usage.db');
  writeFileSync(path, Buffer.from('this is not an SQLite database, just garbage '.repeat(200)));
  const notices: string[] = [];
  const store = await UsageStore.open({ path, now: () => T, onNotice: (m) => notices.push(m) });
  assert.equal(notices.length, 1);
  assert.match(notices[0], /usage database .*usage\.db is damaged \(.*not a database.*\); kept it as .*usage\.db\.corrupt-\d{4}-.* and started a fresh one/);
  const aside = readdirSync(sub).filter((f) => f.startsWith('usage.db.corrupt-'));
  assert.equal(aside.length, 1);
  assert.ok(existsSync(join(sub, aside[0])));
  store.ingest(fakeSnapshot(1, T, gpus, [{ pid: 9, gpu: 0, user: 'frank', sm: 10, mem: GiB }]));
  await store.flush();
  assert.equal((await store.db.get<{ n: number }>('SELECT count(*) AS n FROM samples'))?.n, 1);
  await store.close();

  // a report does not move the engine's file: it says what is wrong
  writeFileSync(path, Buffer.from('garbage again '.repeat(500)));
  await assert.rejects(UsageStore.open({ path, onCorrupt: 'fail' }), /usage database .* is damaged .*keeps it aside and starts a fresh one/);
});

test('the database lives in the XDG data directory', () => {
  assert.equal(defaultUsageDbPath({ XDG_DATA_HOME: '/data/x', HOME: '/home/u' }), '/data/x/gpushare/usage.db');
  assert.equal(defaultUsageDbPath({ HOME: '/home/u' }), '/home/u/.local/share/gpushare/usage.db');
});

const DAY = { since: T - 10 * HOUR_MS, until: T + 14 * HOUR_MS, now: T + 14 * HOUR_MS };

test('one day\'s totals are the same by user, by job and by GPU: GPU-hours, SM-hours, GiB-hours', async () => {
  const store = await storeWithKnownStream();
  const totals = await Promise.all((['user', 'job', 'gpu'] as const).map((by) => queryUsage(store.db, { ...DAY, by }).then((r) => r.totals)));
  for (const field of ['gpuSeconds', 'smSeconds', 'memoryGiBHours'] as const) {
    const [byUser, byJob, byGpu] = totals.map((t) => t[field]);
    assert.ok(Math.abs(byUser - byJob) < 1e-9 && Math.abs(byJob - byGpu) < 1e-9, `${field}: by user ${byUser}, by job ${byJob}, by GPU ${byGpu}`);
  }
  assert.ok(Math.abs(totals[2].gpuSeconds - (13.5 + 10)) < 1e-9, 'by GPU: the time each GPU was in use');
  await store.close();
});

/** A scripted /proc for the store's ownership: pid → parent. */
const parents = (entries: Record<number, number>) => (pid: number): ProcStatus | null =>
  pid in entries ? { pid, uid: 1000, state: 'S', ppid: entries[pid], startTicks: pid } : null;

test('a job behind a wrapper script: its child\'s samples are the job\'s, by job and by user', async () => {
  const store = await UsageStore.open({ path: freshPath(), now: () => T + HOUR_MS, onNotice: () => undefined });
  // j7's process 700 is `bash run.sh`; its child 701 (python) is what the driver lists on the GPU
  const ownership = new JobOwnership(parents({ 700: 1, 701: 700, 800: 1 }));
  ownership.claim('j7', 'alice', 700, 700);
  store.useOwnership(ownership);
  const tick = fakeTicks(1000);
  for (let k = 0; k < 10; k++) {
    store.ingest(tick(T + k * 1000, gpus, [
      { pid: 701, gpu: 0, user: 'alice', sm: 50, mem: GiB },
      { pid: 800, gpu: 0, user: 'alice', sm: 10, mem: GiB },
    ]));
  }
  await store.flush();
  const byJob = await queryUsage(store.db, { ...DAY, by: 'job' });
  assert.deepEqual(byJob.rows.map((r) => r.key).sort(), ['j7', 'p800']);
  assertFigures(row(byJob, 'j7'), { gpuSeconds: 5, smSeconds: 5, memoryGiBHours: 10 / 3600 });
  const byUser = await queryUsage(store.db, { ...DAY, by: 'user' });
  assertFigures(row(byUser, 'alice'), { gpuSeconds: 10, smSeconds: 6 });
  await store.close();
});

test('usage integrates the interval each snapshot covers: irregular ticks, a late tick, a gap', async () => {
  const store = await UsageStore.open({ path: freshPath(), now: () => T + HOUR_MS, onNotice: () => undefined });
  const proc = [{ pid: 9, gpu: 0, user: 'ivy', sm: 100, mem: GiB }];
  // [takenAt offset, interval it covers, the sampler's interval then]: a first tick, irregular ticks,
  // a tick 2.9 intervals late (still continuous), then one past 3 intervals (the engine was down: one nominal interval)
  const ticks: Array<[number, number | null, number]> = [[0, null, 500], [400, 400, 500], [1100, 700, 500], [2550, 1450, 500], [9000, 6450, 500], [9250, 250, 250]];
  ticks.forEach(([at, intervalMs, nominalIntervalMs], i) => store.ingest(fakeSnapshot(i + 1, T + at, gpus, proc, { intervalMs, nominalIntervalMs })));
  await store.flush();
  const report = await queryUsage(store.db, { ...DAY, by: 'user' });
  assertFigures(row(report, 'ivy'), { smSeconds: 0.5 + 0.4 + 0.7 + 1.45 + 0.5 + 0.25, gpuSeconds: 3.8 });
  await store.close();
});

test('a job on two GPUs counts its waits on each of its GPUs in the report by GPU', async () => {
  const store = await UsageStore.open({ path: freshPath(), now: () => T + HOUR_MS, onNotice: () => undefined });
  const base = { managed: true, uid: 1001, argv: ['torchrun', 'train.py'], cwd: null, priority: 'normal' as const, memoryQuotaBytes: null, memoryRequestBytes: null, mode: 'shared' as const, mpsSharePercent: null, migSlice: null, suspendedBy: null, pid: null, exitCode: null, signal: null, logPath: null, usedMemory: null, smPercent: null };
  store.recordJob({
    ...base, id: 'j2', owner: 'dan', gpu: 0, gpus: [0, 2], requestedGpu: 0, requestedGpus: [0, 2], gpuCount: 2, state: 'finished',
    history: [
      { state: 'queued', at: T, reason: 'submitted' },
      { state: 'running', at: T + 1000, reason: 'started on GPUs 0,2' },
      { state: 'suspended', at: T + 2000, reason: 'suspended by dan' },
      { state: 'running', at: T + 5000, reason: 'resumed' },
      { state: 'finished', at: T + 6000, reason: 'exit code 0' },
    ],
  });
  await store.flush();
  const byGpu = await queryUsage(store.db, { since: T - HOUR_MS, until: T + HOUR_MS, resolution: 'raw', now: T + HOUR_MS, by: 'gpu' });
  assertFigures(row(byGpu, '0'), { suspendedSeconds: 3 });
  assertFigures(row(byGpu, '2'), { suspendedSeconds: 3 });
  await store.close();
});
