// The tray's and notifications' view of a real engine over its socket: this user's conditions only,
// kept current as conditions and jobs change; "pause my best-effort jobs" touches only theirs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { untilWith } from '../testing/until.js';
import type { ActiveCondition } from '../../shared/api.js';
import type { Alert, JobView } from '../../shared/jobs.js';
import { ApiError } from '../engine/api/api-error.js';
import { Engine } from '../engine/engine.js';
import { listenOnSocket } from '../engine/server/socket-server.js';
import { noGpus } from '../engine/store/testing/synthetic.js';
import { openEngineView } from './engine-view.js';
import { openLineConnection } from './line-connection.js';
import { realBackend } from '../engine/gpu/gpu-backend.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-view-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ME = process.getuid!();
const BOB = ME === 4242 ? 4243 : 4242;

const job = (id: string, uid: number, gpu: number, priority: JobView['priority'] = 'normal', state: JobView['state'] = 'running'): JobView => ({
  id, managed: true, owner: uid === ME ? 'me' : 'bob', uid, argv: ['train'], cwd: null, gpu, gpus: [gpu], requestedGpu: gpu, priority,
  memoryQuotaBytes: null, memoryRequestBytes: null, mode: 'shared', mpsSharePercent: null, migSlice: null, state, suspendedBy: null,
  pid: 100, exitCode: null, signal: null, logPath: null, history: [], usedMemory: null, smPercent: null,
});
const condition = (kind: ActiveCondition['kind'], gpu: number | null, jobId: string | null): ActiveCondition => ({ kind, severity: 'warning', gpu, jobId, message: `${kind} ${gpu} ${jobId}` });

/** An engine with a jobs table the test sets (no scheduler), on a unix socket. */
async function engineWithJobs(jobs: JobView[]) {
  const engine = new Engine(realBackend(noGpus, () => undefined));
  let table = jobs;
  const suspended: string[] = [];
  engine.dispatcher.register('jobs.list', () => table);
  // whose each job is: the dispatcher checks a job method's caller against it before the handler
  engine.dispatcher.useJobOwners((id) => {
    const found = table.find((j) => j.id === id);
    return found ? { user: found.owner, uid: found.uid } : null;
  });
  engine.dispatcher.register('jobs.suspend', ({ job: id }) => {
    if (id === 'j5') throw new ApiError('conflict', 'j5 is finishing.');
    suspended.push(id);
    return table.find((j) => j.id === id)!;
  });
  const socket = await listenOnSocket(engine, join(dir, `engine-${Math.random().toString(36).slice(2)}.sock`));
  return {
    engine,
    suspended,
    path: socket.path,
    setJobs(next: JobView[]) {
      table = next;
      engine.events.emit('jobs', next);
    },
    close: () => socket.close(),
  };
}

const until = untilWith({ timeoutMs: 5_000, intervalMs: 10 });

test('this user\'s conditions only, from the start and as conditions and jobs change', { timeout: 10_000 }, async () => {
  // mine: j1 on GPU 0; bob's: j2 on GPU 0, j3 on GPU 2
  const e = await engineWithJobs([job('j1', ME, 0), job('j2', BOB, 0), job('j3', BOB, 2)]);
  e.engine.setConditions([condition('quota', 0, 'j2'), condition('quota', 0, 'j1')]);
  const view = await openEngineView(await openLineConnection(e.path));
  assert.equal(view.whoami.uid, ME);
  assert.deepEqual(view.myConditions().map((c) => c.message), ['quota 0 j1'], 'bob\'s quota on the same GPU is his');

  const heard: string[][] = [];
  view.onMyConditions((list) => heard.push(list.map((c) => c.message)));
  e.engine.setConditions([condition('quota', 0, 'j2'), condition('quota', 0, 'j1'), condition('contention', 2, 'j3')]);
  e.engine.setConditions([condition('quota', 0, 'j2'), condition('contention', 0, 'j2')]);
  await until('her first change of conditions', () => heard.length === 1);
  assert.deepEqual(heard, [['contention 0 j2']], 'GPU 2\'s contention did not change her list; GPU 0\'s did, as her quota ended');

  e.setJobs([job('j1', ME, 1), job('j2', BOB, 0), job('j3', BOB, 2)]); // her job moved to GPU 1
  await until('her second change of conditions', () => heard.length === 2);
  assert.deepEqual(heard[1], [], 'contention on GPU 0 is no longer hers');
  view.close();
  await e.close();
});

test('alerts reach the notifier, which asks whose they are', { timeout: 10_000 }, async () => {
  const e = await engineWithJobs([job('j1', ME, 0), job('j2', BOB, 3)]);
  const view = await openEngineView(await openLineConnection(e.path));
  const alerts: Alert[] = [];
  view.onAlert((alert) => alerts.push(alert));
  e.engine.raiseAlert({ kind: 'finished', severity: 'info', gpu: 3, jobId: 'j2', message: 'j2 finished.' });
  e.engine.raiseAlert({ kind: 'failed', severity: 'error', gpu: 0, jobId: 'j1', message: 'j1 failed.' });
  await until('both alerts', () => alerts.length === 2);
  assert.deepEqual(alerts.map((a) => [a.jobId, view.concerns(a)]), [['j2', false], ['j1', true]]);
  view.close();
  await e.close();
});

test('"pause my best-effort jobs" suspends this user\'s running best-effort jobs only, and says which were refused', { timeout: 10_000 }, async () => {
  const e = await engineWithJobs([
    job('j1', ME, 0, 'best-effort'),
    job('j2', BOB, 0, 'best-effort'),
    job('j3', ME, 0, 'normal'),
    job('j4', ME, 1, 'best-effort', 'gated'),
    job('j5', ME, 1, 'best-effort'),
    job('j6', ME, 1, 'best-effort', 'suspended'),
  ]);
  const view = await openEngineView(await openLineConnection(e.path));
  assert.deepEqual(await view.pauseMyBestEffort(), { paused: ['j1', 'j4'], refused: ['j5'] });
  assert.deepEqual(e.suspended, ['j1', 'j4']);
  view.close();
  await e.close();
});
