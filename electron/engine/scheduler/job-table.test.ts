// The job table: finished jobs are kept by count and by size (the oldest leave first; the store
// keeps them all), and an owner's queued jobs are counted as jobs move (issue 24, findings 6 and 9).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FINISHED_KEPT, FINISHED_KEPT_BYTES, JobTable, newJobView, viewBytes } from './job-table.js';
import { JobStateMachine } from './job-state.js';

const view = (n: number, argv: string[] = ['/bin/true']) => newJobView({ id: `j${n}`, managed: true, owner: 'ada', uid: 1000, argv }, 'queued', 'submitted');

test('finished jobs: the newest FINISHED_KEPT stay, and fewer when their views pass FINISHED_KEPT_BYTES', () => {
  const machine = new JobStateMachine(() => undefined);
  const table = new JobTable();
  const finish = (n: number, argv?: string[], cwd: string | null = null, reasons = 0) => {
    const v = view(n, argv);
    v.cwd = cwd;
    for (let i = 0; i < reasons; i++) v.history.push({ state: 'queued', at: i, reason: 'r'.repeat(1000) });
    const record = table.add(v);
    machine.fire(record.view, 'cancel', 'cancelled');
    table.moved(record, 'queued');
  };
  for (let n = 1; n <= FINISHED_KEPT + 100; n++) finish(n);
  assert.equal(table.all().length, FINISHED_KEPT);
  assert.equal(table.get('j100'), undefined, 'the oldest left first');
  assert.ok(table.get(`j${FINISHED_KEPT + 100}`));
  // as large as a view gets: 4 KB of argv shown, a 4 KB working directory, a history of long reasons
  const big = ['/bin/true', 'x'.repeat(4000)];
  for (let n = 1000; n < 1000 + FINISHED_KEPT; n++) finish(n, big, '/' + 'd'.repeat(4000), 20);
  const kept = table.all();
  const bytes = kept.reduce((sum, r) => sum + viewBytes(r.view), 0);
  assert.ok(kept.length < FINISHED_KEPT && bytes <= FINISHED_KEPT_BYTES && bytes + viewBytes(kept[0].view) > FINISHED_KEPT_BYTES, `${kept.length} finished jobs of ${viewBytes(kept[0].view)} bytes kept, ${bytes} in all`);
  assert.equal(kept.at(-1)!.view.id, `j${1000 + FINISHED_KEPT - 1}`, 'the newest stays');
});

test("an owner's queued jobs are counted as they are added, start, are cancelled and removed", () => {
  const machine = new JobStateMachine(() => undefined);
  const table = new JobTable();
  const records = [1, 2, 3].map((n) => table.add(view(n)));
  assert.equal(table.queuedOf(1000), 3);
  machine.fire(records[0].view, 'start', 'starting');
  table.moved(records[0], 'queued');
  machine.fire(records[1].view, 'cancel', 'cancelled');
  table.moved(records[1], 'queued');
  assert.equal(table.queuedOf(1000), 1);
  assert.deepEqual(table.placed().map((r) => r.view.id), ['j1']);
  table.remove('j3');
  assert.equal(table.queuedOf(1000), 0);
  assert.deepEqual(table.queued(), []);
});

test('list() copies a queued job once per change: a change told through touch() or moved() shows, and the order is by number', () => {
  const machine = new JobStateMachine(() => undefined);
  const table = new JobTable();
  const [a, b] = [12, 3].map((n) => table.add(view(n)));
  assert.deepEqual(table.list(false).map((j) => j.id), ['j3', 'j12']);
  a.view.priority = 'high';
  table.touch(a);
  assert.equal(table.list(false).find((j) => j.id === 'j12')!.priority, 'high');
  machine.fire(b.view, 'cancel', 'cancelled');
  table.moved(b, 'queued');
  assert.deepEqual(table.list(false).map((j) => j.id), ['j12']);
  assert.deepEqual(table.list(true).map((j) => [j.id, j.state]), [['j3', 'failed'], ['j12', 'queued']]);
});
