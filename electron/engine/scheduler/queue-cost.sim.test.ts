// Job commands cost the same whatever the queue's length (issue 24, finding 6: 2,900 queued jobs
// made every command slower). Counted, not timed: the job-table rows a command visits before it
// answers, with 10 and with 3,000 jobs queued; and a burst of commands shares evaluations.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver } from '../gpu/simulated-driver.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { schedulerRig, type SchedulerRig } from '../testing/scheduler-rig.js';
import { newJobView } from './job-table.js';

const GiB = 1024 ** 3;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-queue-cost-', (rig) => ({ driver, nvml, dir } = rig));

/** A running sleeper that declared 30 GiB of the A100's 40, and `queued` jobs of 20 GiB waiting behind it. */
async function queueOf(name: string, queued: number): Promise<{ r: SchedulerRig; queuedIds: string[] }> {
  const r = schedulerRig({ driver, nvml, dir }, name, {}, cleanups);
  await r.attached.ready;
  const blocker = await r.engine.call('jobs.submit', { argv: ['/bin/sleep', '600'], gpu: 0, cwd: dir, memoryRequestBytes: 30 * GiB });
  cleanups.push(() => {
    const pid = r.attached.scheduler.table.get(blocker.id)?.view.pid;
    if (pid) process.kill(pid, 'SIGKILL');
  });
  await r.until('the blocker runs', async () => (await r.job(blocker.id))?.state === 'running');
  const scheduler = r.attached.scheduler;
  const queuedIds: string[] = [];
  for (let i = 0; i < queued; i++) {
    const id = scheduler.table.nextManagedId();
    queuedIds.push(id);
    await scheduler.submit(newJobView({ id, managed: true, owner: 'root', uid: 0, argv: ['/bin/sleep', '600'], cwd: dir, requestedGpu: 0, gpu: 0, memoryRequestBytes: 20 * GiB }, 'queued', 'submitted'), {
      executable: '/bin/sleep',
      launchEnv: {},
      runAs: null,
    });
  }
  await r.tick();
  return { r, queuedIds };
}

/** Rows of the job table each command visits, from its request to its answer. */
async function commandRows(r: SchedulerRig, queuedIds: string[]): Promise<Record<string, number>> {
  const table = r.attached.scheduler.table;
  const middle = queuedIds[Math.floor(queuedIds.length / 2)];
  const commands: Record<string, () => Promise<unknown>> = {
    setPriority: () => r.engine.call('jobs.setPriority', { job: middle, priority: 'best-effort' }),
    setQuota: () => r.engine.call('jobs.setQuota', { job: middle, bytes: 25 * GiB }),
    place: () => r.engine.call('jobs.place', { job: middle, gpu: 0 }),
    cancel: () => r.engine.call('jobs.terminate', { job: queuedIds[1] }),
    submit: () => r.engine.call('jobs.submit', { argv: ['/bin/sleep', '600'], gpu: 0, cwd: dir, memoryRequestBytes: 20 * GiB }),
  };
  const rows: Record<string, number> = {};
  for (const [name, command] of Object.entries(commands)) {
    const before = table.rowsVisited;
    await command();
    rows[name] = table.rowsVisited - before;
  }
  return rows;
}

test('a job command visits as many job-table rows with 3,000 jobs queued as with 10', async () => {
  const small = await queueOf('small', 10);
  const large = await queueOf('large', 3000);
  const rowsSmall = await commandRows(small.r, small.queuedIds);
  const rowsLarge = await commandRows(large.r, large.queuedIds);
  assert.deepEqual(rowsLarge, rowsSmall, `rows visited per command, 3,000 queued ${JSON.stringify(rowsLarge)} vs 10 queued ${JSON.stringify(rowsSmall)}`);
});

test('cancelling 300 queued jobs one command at a time shares evaluations: at most one per 100 ms of commands, plus one', async () => {
  const { r, queuedIds } = await queueOf('burst', 400);
  const counters = r.attached.scheduler.counters;
  const before = counters.evaluations;
  const started = Date.now();
  for (const job of queuedIds.slice(0, 300)) {
    await r.engine.call('jobs.terminate', { job });
    await new Promise((resolve) => setImmediate(resolve)); // as from a socket: each command its own turn of the event loop
  }
  await new Promise((resolve) => setTimeout(resolve, 250)); // the last scheduled evaluation
  const evaluations = counters.evaluations - before;
  const bound = Math.ceil((Date.now() - started) / 100) + 1;
  assert.ok(evaluations <= bound, `${evaluations} evaluations for 300 commands in ${Date.now() - started} ms (bound ${bound})`);
  assert.equal((await r.job(queuedIds[0]))!.state, 'failed', 'each was cancelled');
  assert.equal((await r.job(queuedIds[300]))!.state, 'queued', 'the others still wait');
});
