// Renice reaches every thread: Linux keeps a nice value per thread, and a process's pid names only its first.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { test } from 'node:test';
import { ProcessControl } from './process-control.js';
import { threadIds } from '../proc/proc-status.js';
import { until } from '../../testing/until.js';


/** Field 19 of /proc/PID/task/TID/stat, per thread. */
function niceOfThreads(pid: number): number[] {
  return threadIds(pid).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

test('renice sets every thread of a multi-threaded process, and renicing back restores every thread', async (t) => {
  const node = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); // V8 and libuv threads
  t.after(() => {
    node.kill('SIGKILL');
  });
  const pid = node.pid!;
  await until(`node ${pid} running several threads`, () => threadIds(pid).length >= 2, { timeoutMs: 5_000, intervalMs: 25 });
  const original = getPriority(pid);
  const control = new ProcessControl();

  assert.equal(control.renice(pid, 15), true);
  const lowered = niceOfThreads(pid);
  assert.deepEqual(lowered, lowered.map(() => 15), `every thread is at nice 15: ${lowered}`);

  assert.equal(control.renice(pid, original), true, 'back up (as root, as tests run in CI)');
  const restored = niceOfThreads(pid);
  assert.deepEqual(restored, restored.map(() => original), `every thread is back at nice ${original}: ${restored}`);
});
