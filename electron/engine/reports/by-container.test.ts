// Reports by container: the store keeps each sample's container, and the figures add up to the by-user ones.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { ProcessContext } from '../../../shared/snapshot.js';
import type { UsageReport } from '../../../shared/usage-report.js';
import { MIGRATIONS, migrate } from '../store/migrations.js';
import { SqliteDb } from '../store/sqlite.js';
import { fakeGpu, fakeTicks, random, type FakeProcess } from '../store/testing/synthetic.js';
import { HOUR_MS, UsageStore } from '../store/usage-store.js';
import { reportToCsv } from './csv.js';
import { reportToHtml } from './html.js';
import { queryUsage, type Resolution } from './query.js';

const GiB = 2 ** 30;
const T = Date.UTC(2026, 2, 2, 9, 0, 0);
const dir = mkdtempSync(join(tmpdir(), 'gpushare-by-container-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const DOCKER = 'a1'.repeat(32);
const PODMAN = 'b2'.repeat(32);
const context = (container: ProcessContext['container'], containerUser: string | null = null): ProcessContext => ({
  container, containerUser, systemdUnit: null, slurmJobId: null, jupyterKernel: null, sshSession: null,
});
/** pid → where it runs: two docker processes (root inside), ada's rootless podman container, and bare processes. */
const WHERE = new Map<number, ProcessContext | null>([
  [201, context({ runtime: 'docker', id: DOCKER, name: 'trainer' })],
  [202, context({ runtime: 'docker', id: DOCKER, name: 'trainer' })],
  [203, context({ runtime: 'podman', id: PODMAN, name: 'ada-notebook' }, 'ada')],
  [204, context(null)],
  [205, null],
]);
const USERS: Record<number, string> = { 201: 'root', 202: 'root', 203: 'ada', 204: 'bob', 205: 'bob' };

/** About two hours of ticks at 30 s on 2 GPUs, processes coming and going, several sharing a GPU. */
async function storeWithContainers(): Promise<{ store: UsageStore; end: number }> {
  const store = await UsageStore.open({ path: join(dir, `usage-${Math.random().toString(36).slice(2)}.db`), now: () => T + 3 * HOUR_MS, onNotice: () => undefined });
  const tick = fakeTicks(30_000);
  const rand = random(7);
  let t = T - 17_000;
  for (let i = 0; i < 240; i++) {
    t += 30_000 + Math.floor(rand() * 4000 - 2000);
    const live: FakeProcess[] = [...WHERE.keys()]
      .filter((pid) => rand() < 0.8)
      .map((pid) => ({ pid, gpu: pid % 2, user: USERS[pid], sm: Math.floor(rand() * 90), mem: Math.floor(rand() * 6 * GiB) }));
    const snapshot = tick(t, [fakeGpu(0), fakeGpu(1)], live);
    for (const p of snapshot.processes) p.context = WHERE.get(p.pid) ?? null;
    store.ingest(snapshot);
    if (i % 50 === 0) await store.flush();
  }
  await store.flush();
  return { store, end: t + 1 };
}

const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

test('report by container: totals of GPU time, SM time and memory equal the by-user totals, from raw samples and every rollup', async () => {
  const { store, end } = await storeWithContainers();
  try {
    for (const resolution of ['raw', 'minute', 'hour', 'day', undefined] as Array<Resolution | undefined>) {
      const range = { since: T - HOUR_MS, until: end, now: end, ...(resolution ? { resolution } : {}) };
      const byUser = await queryUsage(store.db, { ...range, by: 'user' });
      const byContainer = await queryUsage(store.db, { ...range, by: 'container' });
      assert.deepEqual(byContainer.rows.map((r) => r.key).sort(), [DOCKER.slice(0, 12), PODMAN.slice(0, 12), '-'].sort(), `keys from ${resolution ?? 'the plan'}`);
      for (const field of ['gpuSeconds', 'smSeconds', 'memoryGiBHours'] as const) {
        assert.ok(byUser.totals[field] > 0);
        assert.ok(close(byContainer.totals[field], byUser.totals[field]), `${resolution ?? 'planned'} ${field}: by container ${byContainer.totals[field]} ≠ by user ${byUser.totals[field]}`);
      }
      // the docker container holds root's two processes: its SM time is root's
      const root = byUser.rows.find((r) => r.key === 'root')!;
      assert.ok(close(rowOf(byContainer, DOCKER.slice(0, 12)).smSeconds, root.smSeconds));
    }
  } finally {
    await store.close();
  }
});

test('container rows are labelled with runtime, name and who started it; bare processes are "not in a container"', async () => {
  const { store, end } = await storeWithContainers();
  try {
    const report = await queryUsage(store.db, { since: T - HOUR_MS, until: end, now: end, by: 'container' });
    assert.equal(report.by, 'container');
    assert.equal(rowOf(report, DOCKER.slice(0, 12)).label, 'docker trainer');
    assert.equal(rowOf(report, PODMAN.slice(0, 12)).label, 'podman ada-notebook · started by ada');
    assert.equal(rowOf(report, '-').label, 'not in a container');
    const csv = reportToCsv(report).split('\n');
    assert.match(csv[0], /^container,label,/);
    assert.ok(csv.some((line) => line.startsWith(`${PODMAN.slice(0, 12)},podman ada-notebook · started by ada,`)), csv.join('\n'));
    const html = reportToHtml(report);
    assert.match(html, /<title>GPU usage by container/);
    assert.match(html, /<td>b2b2b2b2b2b2<\/td><td>podman ada-notebook · started by ada<\/td>/);
  } finally {
    await store.close();
  }
});

test('a database from before containers were kept: migration adds the column, its old rows read "?"', async () => {
  const path = join(dir, 'old.db');
  const db = await SqliteDb.open(path);
  for (const step of MIGRATIONS.slice(0, 2)) await step(db);
  await db.exec('PRAGMA user_version = 2');
  await db.run(
    `INSERT INTO samples (t, gpu, pid, user, job, smPercent, usedMemory, dt, flags, peakJob, peakUser, peakGpu) VALUES (?, 0, 7, 'old', 'p7', 50, ${GiB}, 10, 7, ${GiB}, ${GiB}, ${GiB})`,
    [T + 1000],
  );
  await migrate(db);
  const report = await queryUsage(db, { since: T, until: T + 60_000, now: T + 60_000, by: 'container', resolution: 'raw' });
  assert.deepEqual(report.rows.map((r) => [r.key, r.label, r.smSeconds]), [['?', 'recorded before gpushare kept containers', 5]]);
  await db.close();
});

function rowOf(report: UsageReport, key: string) {
  const found = report.rows.find((r) => r.key === key);
  assert.ok(found, `a row for ${key} in ${report.rows.map((r) => r.key).join(', ')}`);
  return found;
}
