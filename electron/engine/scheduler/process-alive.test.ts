// Scheduler.processAlive: a job's process runs on only while its pid still names the process started at the
// job's start time. A job whose start time is unknown cannot be told from a process that took its pid since:
// it counts as not running, and the log says so once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { ApiEvents } from '../../../shared/api.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import { emptySnapshot } from '../testing/empty-snapshot.js';
import { EventBus } from '../event-bus.js';
import { Freezer } from '../holds/freezer.js';
import { ProcessControl } from '../holds/process-control.js';
import { readProcStatus } from '../proc/proc-status.js';
import { JobTable, newJobView } from './job-table.js';
import { Scheduler } from './scheduler.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-alive-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const box: Snapshot = emptySnapshot();

function scheduler(logged: string[]): Scheduler {
  const control = new ProcessControl();
  const s = new Scheduler({
    engine: { sampler: { latest: box, sampleNow: () => box } as never, events: new EventBus<ApiEvents>(), raiseAlert: (() => undefined) as never, setConditions: () => undefined },
    control,
    freezer: new Freezer({ recordPath: join(dir, `suspended-${Math.random()}.json`), control, guardian: false }),
    gate: null,
    logDir: join(dir, 'logs'),
    log: (line) => logged.push(line),
  });
  after(() => s.stop());
  return s;
}

const record = (pid: number, startTicks: number | null) =>
  new JobTable().add(newJobView({ id: 'j7', managed: true, owner: 'ann', uid: 0, argv: ['train'], gpu: 0, pid }, 'running', 'adopted'), { startTicks });

test('a job\'s process is alive while its pid names the process of its start time, and not once it has exited', async () => {
  const logged: string[] = [];
  const s = scheduler(logged);
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  const startTicks = readProcStatus(child.pid!)!.startTicks;
  assert.equal(s.processAlive(record(child.pid!, startTicks)), true);
  assert.equal(s.processAlive(record(child.pid!, startTicks + 1)), false, 'another start time: another process');
  child.kill('SIGKILL');
  await once(child, 'exit');
  assert.equal(s.processAlive(record(child.pid!, startTicks)), false);
  assert.deepEqual(logged, []);
});

test('a job whose start time is unknown is not alive, even while its pid names a running process; the log says why, once', () => {
  const logged: string[] = [];
  const s = scheduler(logged);
  const job = record(process.pid, null); // this process runs: a pid alone would say "alive"
  assert.equal(s.processAlive(job), false);
  assert.equal(s.processAlive(job), false);
  assert.deepEqual(logged, [`pid ${process.pid} (j7) has no known start time, so it cannot be told from a process that took the pid since: treated as not running`]);
});
