// The store attached to an engine: ticks, alerts and audited commands are recorded; reports.query answers.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { slurmUsageCsv } from '../../../shared/slurm-usage-report.js';
import { Engine } from '../engine.js';
import { readSlurmUsage } from '../reports/slurm-usage.js';
import { attachUsageStore } from './attach.js';
import { fakeGpu, noGpus, fakeSnapshot, fakeTicks } from './testing/synthetic.js';
import { UsageStore } from './usage-store.js';
import { realBackend } from '../gpu/gpu-backend.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-attach-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('an attached store records ticks, alerts and audited commands, and answers reports.query', async () => {
  const engine = new Engine(realBackend(noGpus, () => undefined), { rateHz: 2 });
  const store = await UsageStore.open({ path: join(dir, 'usage.db') });
  const detach = attachUsageStore(engine, store);
  const now = Date.now();
  const tick = fakeTicks(500);
  for (let k = 0; k < 4; k++) {
    engine.events.emit('snapshot', tick(now - 2000 + k * 500, [fakeGpu(0)], [{ pid: 77, gpu: 0, user: 'gina', sm: 40, mem: 2 ** 30 }]));
  }
  engine.raiseAlert({ kind: 'quota', gpu: 0, jobId: 'p77', message: 'p77 went over its memory quota.', severity: 'error' });
  await engine.call('sampler.setRate', { hz: 4 });
  await store.flush();

  const report = await engine.call('reports.query', { since: now - 60_000, until: now + 60_000, by: 'user' });
  assert.equal(report.rows.length, 1);
  assert.equal(report.rows[0].key, 'gina');
  assert.ok(Math.abs(report.rows[0].smSeconds - 0.4 * 2) < 1e-9, `4 ticks of 0.5 s at 40 %: ${report.rows[0].smSeconds}`);
  assert.deepEqual(report.events.map((e) => [e.kind, e.jobId]), [['quota', 'p77']]);
  const csv = await engine.call('reports.export', { since: now - 60_000, until: now + 60_000, by: 'user', format: 'csv' });
  assert.match(csv.fileName, /^gpushare-usage-by-user-\d{4}-\d\d-\d\d\.csv$/);
  assert.equal(csv.content.split('\r\n')[1].split(',')[0], 'gina');
  const html = await engine.call('reports.export', { since: now - 60_000, until: now + 60_000, by: 'user', format: 'html' });
  assert.match(html.content, /^<!doctype html>/i);
  assert.equal(JSON.parse((await engine.call('reports.export', { since: now - 60_000, until: now + 60_000, by: 'job', format: 'json' })).content).by, 'job');
  const audit = await store.db.all<{ what: string; who: string }>('SELECT what, who FROM audit ORDER BY id');
  assert.equal(audit[0].what, 'sampler.setRate');
  await assert.rejects(engine.call('reports.query', { since: now, until: now - 1, by: 'user' }), { name: 'ValidationError', message: /^params\.until: must be after params\.since/ });
  await assert.rejects(engine.call('reports.query', { since: now, by: 'team' } as never), /by: must be one of "user", "job", "gpu"/);
  detach();
  await store.close();
});

test('a rate change mid-stream: each tick counts the interval it covered, not the rate set since', async () => {
  const engine = new Engine(realBackend(noGpus, () => undefined), { rateHz: 1 });
  const store = await UsageStore.open({ path: join(dir, 'rate.db') });
  const detach = attachUsageStore(engine, store);
  const t0 = Date.now() - 10_000;
  const proc = [{ pid: 78, gpu: 0, user: 'hal', sm: 40, mem: 2 ** 30 }];
  const emit = (seq: number, at: number, intervalMs: number | null, nominalIntervalMs: number) =>
    engine.events.emit('snapshot', fakeSnapshot(seq, t0 + at, [fakeGpu(0)], proc, { intervalMs, nominalIntervalMs }));
  emit(1, 0, null, 1000);
  emit(2, 1000, 1000, 1000);
  await engine.call('sampler.setRate', { hz: 10 }); // the tick already scheduled still covers a whole second
  emit(3, 2000, 1000, 1000);
  emit(4, 2100, 100, 100);
  emit(5, 2200, 100, 100);
  await store.flush();
  const report = await engine.call('reports.query', { since: t0 - 60_000, until: t0 + 60_000, by: 'user' });
  const seconds = 1 + 1 + 1 + 0.1 + 0.1;
  assert.ok(Math.abs(report.rows[0].smSeconds - 0.4 * seconds) < 1e-9, `${seconds} s at 40 %: ${report.rows[0].smSeconds / 0.4} s`);
  detach();
  await store.close();
});

test("a report by job gives a non-administrator another user's jobs by their program's name only, never their arguments (issue 24)", async () => {
  const engine = new Engine(realBackend(noGpus, () => undefined), { rateHz: 2 });
  const store = await UsageStore.open({ path: join(dir, 'labels.db') });
  const detach = attachUsageStore(engine, store);
  const now = Date.now();
  const tick = fakeTicks(500);
  const procs = [
    { pid: 81, gpu: 0, user: 'alice', sm: 40, mem: 2 ** 30, argv: ['/home/alice/bin/train.py', '--api-key=s3cret'] },
    { pid: 82, gpu: 0, user: 'mallory', sm: 40, mem: 2 ** 30, argv: ['/home/mallory/run.sh', '--mine'] },
  ];
  for (let k = 0; k < 2; k++) engine.events.emit('snapshot', tick(now - 2000 + k * 500, [fakeGpu(0)], procs));
  await store.flush();
  const mallory = { uid: 4242, gid: 4242, groups: [], user: 'mallory', pid: null, admin: false, via: 'socket' as const };
  const labels = async (caller: typeof mallory) => Object.fromEntries((await engine.call('reports.query', { since: now - 60_000, until: now + 60_000, by: 'job' }, caller)).rows.map((r) => [r.key, r.label]));
  assert.deepEqual(await labels(mallory), { p81: 'alice: train.py', p82: 'mallory: /home/mallory/run.sh --mine' });
  assert.equal((await labels({ ...mallory, admin: true })).p81, 'alice: /home/alice/bin/train.py --api-key=s3cret', 'an administrator sees it whole');
  const csv = (await engine.call('reports.export', { since: now - 60_000, until: now + 60_000, by: 'job', format: 'csv' }, mallory)).content;
  assert.doesNotMatch(csv, /s3cret|\/home\/alice/);
  detach();
  await store.close();
});

test("usage per Slurm job: reports.slurmJobs answers a non-administrator every job's row, as an administrator and `gpushare report --by slurm-job` get it, and reports.export by slurm-job makes the same rows a file", async () => {
  const engine = new Engine(realBackend(noGpus, () => undefined), { rateHz: 2 });
  const store = await UsageStore.open({ path: join(dir, 'slurm.db') });
  const detach = attachUsageStore(engine, store);
  const now = Date.now();
  const range = { since: now - 60_000, until: now + 60_000 };
  const rows = [
    { jobId: '501', user: 'alice', partition: 'gpu', qos: 'high', start: now - 40_000, end: now - 20_000, gpuHours: 0.5, smHours: 0.25, memoryGiBHours: 3, peakMemoryBytes: 6 * 2 ** 30, gatedSeconds: 2, parkedSeconds: 0, account: 'vision', gpus: 'GPU 0, GPU 1' },
    { jobId: '502', user: 'bob', partition: null, qos: null, start: now - 30_000, end: now - 10_000, gpuHours: 1, smHours: 0.75, memoryGiBHours: 8, peakMemoryBytes: 16 * 2 ** 30, gatedSeconds: 0, parkedSeconds: 5, account: null, gpus: null },
  ];
  rows.forEach((row) => store.recordSlurmUsage(row));
  await store.flush();
  const mallory = { uid: 4242, gid: 4242, groups: [], user: 'mallory', pid: null, admin: false, via: 'socket' as const };
  const asMallory = await engine.call('reports.slurmJobs', range, mallory);
  assert.deepEqual(asMallory, { by: 'slurm-job', ...range, rows, leftOut: 0 });
  assert.deepEqual(await engine.call('reports.slurmJobs', range, { ...mallory, admin: true }), asMallory, 'an administrator reads no more: the row holds what squeue shows everyone');
  assert.deepEqual(await engine.call('reports.slurmJobs', range), await readSlurmUsage(store.db, { ...range, now }), "the engine's own user: the CLI's reading of the store");

  const csv = await engine.call('reports.export', { ...range, by: 'slurm-job', format: 'csv' }, mallory);
  assert.match(csv.fileName, /^gpushare-usage-by-slurm-job-\d{4}-\d\d-\d\d\.csv$/);
  assert.equal(csv.content, slurmUsageCsv(rows), "the CSV `gpushare report --by slurm-job` writes");
  const json = await engine.call('reports.export', { ...range, by: 'slurm-job', format: 'json' }, mallory);
  assert.deepEqual(JSON.parse(json.content), asMallory);
  const html = await engine.call('reports.export', { ...range, by: 'slurm-job', format: 'html' }, mallory);
  assert.equal(html.mimeType, 'text/html;charset=utf-8');
  assert.match(html.content, /^<!doctype html>/i);
  assert.match(html.content, /<td>501<\/td><td>alice<\/td><td>vision<\/td><td>gpu<\/td><td>high<\/td><td>GPU 0, GPU 1<\/td>/);
  assert.match(html.content, /<td>502<\/td><td>bob<\/td><td>–<\/td><td>–<\/td><td>–<\/td><td>–<\/td>/, "a row from before account and GPUs were kept, and one with no partition or QOS: dashes, as the console shows them");
  assert.match(html.content, /<b>2<\/b><span>Slurm jobs<\/span>/);
  const empty = await engine.call('reports.export', { since: now - 120_000, until: now - 60_000, by: 'slurm-job', format: 'html' });
  assert.match(empty.content, /No Slurm job&#39;s usage recorded yet from \d{4}-/, 'no table: a sentence, as in the console');
  assert.doesNotMatch(empty.content, /<table>/);
  await assert.rejects(engine.call('reports.export', { since: now, until: now - 1, by: 'slurm-job', format: 'csv' }), { name: 'ValidationError', message: /^params\.until: must be after params\.since/ });
  detach();
  await store.close();
});
