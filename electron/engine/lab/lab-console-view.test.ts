// The Lab view's update built box by box is what labView and personTotals give for the whole lab,
// before and after one box changes; a box that did not change keeps its row (the same object); and
// the wire's updates (whole, then the rows that changed) applied in order give the same lab.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { labView, personTotals, type LabBox, type LabSnapshot } from '../../../shared/lab.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import { applyLabUpdate, labConsoleRow, labUpdateOf, LAB_USERS_SHOWN } from '../../../shared/lab-console.js';
import { LabConsoleView } from './lab-console-view.js';

const GIB = 1024 ** 3;

function snapshot(takenAt: number, gpus: number, processes: Array<[user: string, gpu: number, gib: number, sm: number]>): Snapshot {
  return {
    seq: 1, takenAt, intervalMs: 1000, nominalIntervalMs: 1000,
    driver: { driverVersion: 'x', nvmlVersion: 'x', cudaDriverVersion: null, simulated: true, scenario: 'test' },
    gpus: Array.from({ length: gpus }, (_, index) => ({ index, uuid: `GPU-${index}`, name: 'NVIDIA H100', pciBusId: '', lost: false, memoryTotal: 80 * GIB, memoryUsed: 10 * GIB, memoryFree: 70 * GIB, utilizationGpu: 50, migEnabled: false, migSlices: [] })),
    processes: processes.map(([user, gpuIndex, gib, smPercent], i) => ({ pid: 100 + i, gpuIndex, user, uid: 1000, usedMemory: gib * GIB, smPercent })),
  } as unknown as Snapshot;
}

const job = (id: string, owner: string, state: 'running' | 'queued', gpu: number | null): JobView =>
  ({ id, owner, managed: true, state, gpu, requestedGpu: gpu ?? 'auto', priority: 'normal', mode: 'shared', usedMemory: null, memoryQuotaBytes: null, memoryRequestBytes: GIB, history: [{ at: 1, state: 'queued', reason: 'submitted' }] }) as unknown as JobView;

const box = (name: string, connection: LabBox['connection'], snap: Snapshot | null, jobs: JobView[]): LabBox => ({ name, reach: `socket /run/${name}.sock`, connection, snapshot: snap, jobs, policy: null, caller: null, updatedAt: snap?.takenAt ?? null });

const whole = (lab: LabSnapshot) => {
  const view = labView(lab);
  return { view: { boxes: view.boxes.map(labConsoleRow), totals: view.totals }, people: personTotals(lab) };
};

test('box by box, the update is labView and personTotals of the whole lab, and a box that did not change keeps its row', () => {
  const now = 1_000_000;
  const lab: LabSnapshot = {
    takenAt: now,
    boxes: [
      box('box1', { state: 'connected', since: 1, via: 'socket' }, snapshot(now, 2, [['ana', 0, 4, 30], ['bo', 1, 2, 10], ['ana', 1, 1, 5]]), [job('j1', 'ana', 'running', 0), job('j2', 'bo', 'queued', null)]),
      box('box2', { state: 'connected', since: 1, via: 'ssh-forward' }, snapshot(now, 1, [['bo', 0, 8, 60]]), [job('j1', 'chen', 'queued', 0)]),
      box('box3', { state: 'down', since: 5, lastError: 'box3: ssh: Connection refused', attempt: 2, nextTryAt: now + 4000 }, snapshot(now - 60_000, 1, [['ana', 0, 3, 0]]), []),
      box('box4', { state: 'connecting', since: now }, null, []),
    ],
  };
  const view = new LabConsoleView();
  const first = view.update(lab);
  assert.deepEqual({ view: first.view, people: first.people }, whole(lab));
  assert.deepEqual(first.sampledAt, { box1: now, box2: now, box3: now - 60_000, box4: null });

  // box2 samples anew: bo's memory grows and ana appears there
  const later: LabSnapshot = { takenAt: now + 1000, boxes: [lab.boxes[0], box('box2', lab.boxes[1].connection, snapshot(now + 1000, 1, [['bo', 0, 9, 70], ['ana', 0, 2, 20]]), lab.boxes[1].jobs), lab.boxes[2], lab.boxes[3]] };
  const second = view.update(later);
  assert.deepEqual({ view: second.view, people: second.people }, whole(later));
  assert.equal(second.view.boxes[0], first.view.boxes[0], 'box1 did not change: its row is the one built before');
  assert.notEqual(second.view.boxes[1], first.view.boxes[1], 'box2 changed: built anew');
  assert.deepEqual(second.people.find((p) => p.user === 'ana')!.boxes, ['box1', 'box2'], 'the down box is left out of the totals, in lab order');

  // a box that left the lab list leaves the update
  const fewer: LabSnapshot = { takenAt: now + 2000, boxes: later.boxes.slice(0, 2) };
  assert.deepEqual((({ view: v, people }) => ({ view: v, people }))(view.update(fewer)), whole(fewer));
});

test('the update on the wire: the whole lab first, then only the rows that changed; applied in order, the lab as the host has it', () => {
  const now = 2_000_000;
  const boxes = ['a', 'b', 'c'].map((name, i) => box(name, { state: 'connected', since: 1, via: 'socket' }, snapshot(now, 1, [['ana', 0, i + 1, 10]]), []));
  const view = new LabConsoleView();
  const first = view.update({ takenAt: now, boxes });
  const whole = labUpdateOf(first, null);
  assert.equal(whole.whole, true);
  assert.deepEqual(whole.rows.map((r) => r.name), ['a', 'b', 'c']);
  const seen = applyLabUpdate(null, JSON.parse(JSON.stringify(whole)));
  assert.deepEqual(seen, first);

  const second = view.update({ takenAt: now + 1000, boxes: [boxes[0], box('b', boxes[1].connection, snapshot(now + 1000, 1, [['bo', 0, 5, 50]]), []), boxes[2]] });
  const delta = labUpdateOf(second, new Map(first.view.boxes.map((r) => [r.name, r])));
  assert.equal(delta.whole, false);
  assert.deepEqual(delta.rows.map((r) => r.name), ['b'], 'only b changed');
  const next = applyLabUpdate(seen, JSON.parse(JSON.stringify(delta)));
  assert.deepEqual(next, second);
  assert.equal(next.view.boxes[0], seen.view.boxes[0], 'a row that did not change keeps its object on the page too');
  // a box that leaves the list leaves the view; a whole update replaces everything
  const third = view.update({ takenAt: now + 2000, boxes: [boxes[0], boxes[2]] });
  assert.deepEqual(applyLabUpdate(next, labUpdateOf(third, new Map(second.view.boxes.map((r) => [r.name, r])))).view, third.view);
  assert.deepEqual(applyLabUpdate(next, labUpdateOf(third, null)), third);
});

test('a GPU on the wire names the users its tile shows, the most memory first, and counts the others', () => {
  const now = 3_000_000;
  const users: Array<[string, number, number, number]> = [['ana', 0, 1, 5], ['bo', 0, 4, 5], ['chen', 0, 2, 5], ['dev', 0, 3, 5], ['eli', 0, 1, 5], ['bo', 0, 1, 5]];
  const state = new LabConsoleView().update({ takenAt: now, boxes: [box('a', { state: 'connected', since: 1, via: 'socket' }, snapshot(now, 2, users), [])] });
  const [crowded, idle] = state.view.boxes[0].gpus;
  assert.equal(LAB_USERS_SHOWN, 3);
  assert.deepEqual(crowded.users, [
    { user: 'bo', processes: 2, memoryBytes: 5 * GIB },
    { user: 'dev', processes: 1, memoryBytes: 3 * GIB },
    { user: 'chen', processes: 1, memoryBytes: 2 * GIB },
  ]);
  assert.equal(crowded.otherUsers, 2, 'ana and eli are counted, not sent');
  assert.deepEqual(Object.keys(crowded).sort(), ['index', 'lost', 'memoryTotal', 'memoryUsed', 'migSlices', 'name', 'otherUsers', 'queued', 'users', 'utilization'], 'nothing the tile does not show');
  assert.deepEqual([idle.users, idle.otherUsers], [[], 0]);
});
