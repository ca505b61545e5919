// The job store when its disk fails (issue 24, finding 10: a failed batch was dropped with no retry
// and no log line, and after a restart 1,037 cancelled or failed jobs came back as queued). A job's
// change that could not be written is kept and retried until it is; the trouble is said once, and
// its end; a submission whose first write fails is refused and never written later.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import type { StoreStatus } from '../../../shared/store-status.js';
import { renderStatus } from '../../cli/commands/status.js';
import { Engine } from '../engine.js';
import { noGpus } from './testing/synthetic.js';
import { newJobView } from '../scheduler/job-table.js';
import { attachUsageStore } from './attach.js';
import { JobStore, type KeptJob } from './job-store.js';
import { UsageStore } from './usage-store.js';
import { realBackend } from '../gpu/gpu-backend.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-job-store-faults-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let dbCount = 0;
const diskFull = (): Error => Object.assign(new Error('SQLITE_FULL: database or disk is full'), { code: 'SQLITE_FULL' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function faultyJobStore(): Promise<{ path: string; jobs: JobStore; notices: string[]; full: { on: boolean } }> {
  const path = join(dir, `usage-${++dbCount}.db`);
  await (await UsageStore.open({ path, onNotice: () => undefined })).close(); // the schema
  const notices: string[] = [];
  const full = { on: false };
  const jobs = await JobStore.open(path, { onNotice: (m) => notices.push(m), writeFault: () => (full.on ? diskFull() : null), retryMs: 10 });
  return { path, jobs, notices, full };
}

const kept = (view: JobView): KeptJob => ({ view, executable: '/bin/sleep', launchEnv: { PATH: '/usr/bin:/bin' }, runAs: null, startTicks: null, slot: null, parked: null, originalNice: null });
const queued = (id: string): JobView => newJobView({ id, managed: true, owner: 'ada', uid: 1000, argv: ['/bin/sleep', '60'], cwd: '/tmp' }, 'queued', 'submitted by ada');
const cancelled = (view: JobView): JobView => ({ ...structuredClone(view), state: 'failed', history: [...view.history, { state: 'failed', at: Date.now(), reason: 'cancelled by ada before it started' }] });

async function liveAfterRestart(path: string): Promise<string[]> {
  const again = await JobStore.open(path, { onNotice: () => undefined });
  try {
    return (await again.loadLive()).map((j) => `${j.view.id} ${j.view.state}`);
  } finally {
    await again.close();
  }
}

test('a cancel written while the disk is full is kept and written once it takes writes again: after a restart the job is not queued', async () => {
  const f = await faultyJobStore();
  const j1 = queued('j1');
  await f.jobs.save(kept(j1));
  f.full.on = true;
  await assert.rejects(f.jobs.save(kept(cancelled(j1))), /SQLITE_FULL/, 'the caller hears that it is not on disk yet');
  await sleep(100); // retries fail meanwhile
  assert.equal(f.notices.length, 1, `the trouble is said once, not once per retry: ${JSON.stringify(f.notices)}`);
  assert.match(f.notices[0], new RegExp(`^Job changes are not being written to ${f.path}: SQLITE_FULL: database or disk is full\\. The latest change of 1 job is kept in memory and retried`));
  const during = f.jobs.status();
  assert.deepEqual(during && { problem: during.problem, unwrittenJobs: during.unwrittenJobs }, { problem: 'SQLITE_FULL: database or disk is full', unwrittenJobs: 1 });
  f.full.on = false;
  for (let i = 0; i < 100 && f.notices.length < 2; i++) await sleep(10);
  assert.match(f.notices[1] ?? '', new RegExp(`^Job changes are written to ${f.path} again: the kept change of 1 job is written\\.$`));
  assert.equal(f.jobs.status(), null, 'every change is on disk again');
  assert.deepEqual(await liveAfterRestart(f.path), [], 'j1 was cancelled: it does not come back queued');
  await f.jobs.close();
});

test('`store.status` (and so `gpushare status` and the console\'s banner) says that job changes wait to be written, and stops saying it once they are', async () => {
  const f = await faultyJobStore();
  const usage = await UsageStore.open({ path: f.path, onNotice: () => undefined });
  const engine = new Engine(realBackend(noGpus, () => undefined));
  const heard: StoreStatus[] = [];
  engine.events.on('store', (s) => heard.push(s));
  attachUsageStore(engine, usage, { jobStore: f.jobs });
  await f.jobs.save(kept(queued('j3')));
  f.full.on = true;
  await f.jobs.save(kept(cancelled(queued('j3')))).catch(() => undefined);
  const status = await engine.call('store.status', {});
  assert.equal(status.unwrittenJobs?.count, 1);
  const line = renderStatus(
    { engine: { kind: 'daemon', owner: 'root', pid: 1, socket: '/run/gpushare/engine.sock', foundBy: 'daemon' }, you: { user: 'ada', uid: 1000, admin: false }, consoleUrl: null, usage: status, otherEngines: [], problem: null, settings: { path: '/x', found: false, problem: null } },
    'ada',
  )
    .split('\n')
    .find((l) => l.startsWith('jobs:'));
  assert.equal(line, `jobs:     NOT ALL ON DISK. Job changes are not being written: SQLITE_FULL: database or disk is full, ${f.path}. The latest change of 1 job is kept in memory and retried until written; a restart now would bring them back as they were last written.`);
  assert.equal(heard.at(-1)?.unwrittenJobs?.count, 1, 'the console hears it');
  f.full.on = false;
  for (let i = 0; i < 100 && f.jobs.status() !== null; i++) await sleep(10);
  assert.equal((await engine.call('store.status', {})).unwrittenJobs, undefined);
  assert.equal(heard.at(-1)?.unwrittenJobs, undefined, 'and hears that it is over');
  await f.jobs.close();
  await usage.close();
});

test('a submission whose first write fails is refused and never written later; other jobs are', async () => {
  const f = await faultyJobStore();
  f.full.on = true;
  await assert.rejects(f.jobs.save(kept(queued('j7'))), /SQLITE_FULL/);
  f.full.on = false;
  await f.jobs.save(kept(queued('j8')));
  await sleep(50);
  assert.deepEqual(await liveAfterRestart(f.path), ['j8 queued'], 'j7 was refused: it never runs');
  await f.jobs.close();
});
