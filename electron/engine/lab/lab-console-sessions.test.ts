// A box's console opened through the lab host (`gpushare start --lab`, `?box=NAME`): a console that subscribes
// with snapshotDeltas gets one whole snapshot, then deltas that rebuild every snapshot the box client heard,
// the same bytes as every other console on that box; a console that does not gets every snapshot whole.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { API_EVENTS } from '../../../shared/api.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { SnapshotDelta } from '../../../shared/snapshot-delta.js';
import { followSnapshots } from '../../../shared/snapshot-follower.js';
import { simulatedRun } from '../../../shared/testing/snapshot-run.js';
import type { BoxClient } from './box-client.js';
import { labConsoleSessions } from './lab-console-sessions.js';
import type { LabHub } from './lab-hub.js';

/** A hub with one connected box whose client's events the test emits. */
function oneBoxHub(): { hub: LabHub; emit: (event: string, data: unknown) => void } {
  const listeners = new Map<string, Set<(data: unknown) => void>>();
  const client = {
    on(event: string, listener: (data: unknown) => void) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      return () => set.delete(listener);
    },
    call: () => Promise.reject(new Error('no requests in this test')),
    subscribe: () => undefined,
    close: () => undefined,
  } as unknown as BoxClient;
  const hub = {
    client: (name: string) => (name === 'box1' ? client : null),
    snapshot: () => ({ takenAt: 0, boxes: [] }),
    onUpdate: () => () => undefined,
  } as unknown as LabHub;
  return { hub, emit: (event, data) => listeners.get(event)?.forEach((l) => l(data)) };
}

test('a box console through the lab host takes deltas that rebuild each snapshot; the bytes are shared, and a console that asks for none gets them whole', () => {
  const { hub, emit } = oneBoxHub();
  const sessions = labConsoleSessions(hub);
  const opened = (subscribe: object) => {
    const lines: Array<string | Buffer> = [];
    const session = sessions.open((line) => lines.push(line), (why) => assert.fail(`ended: ${why}`), new URLSearchParams('box=box1'));
    session.receive(subscribe);
    return { session, lines };
  };
  const deltas = opened({ kind: 'subscribe', events: API_EVENTS, snapshotDeltas: true });
  const alsoDeltas = opened({ kind: 'subscribe', events: API_EVENTS, snapshotDeltas: true });
  const whole = opened({ kind: 'subscribe', events: API_EVENTS });
  const run = simulatedRun(23, 60);
  for (const snapshot of run) emit('snapshot', snapshot);

  const events = (lines: Array<string | Buffer>) => lines.map((l) => JSON.parse(String(l)) as { event: string; data: unknown });
  const got = events(deltas.lines);
  assert.equal(got.length, run.length);
  assert.equal(got[0].event, 'snapshot', 'the first whole');
  assert.ok(got.slice(1).every((m) => m.event === 'snapshot.delta'), 'then deltas');
  const rebuilt: Snapshot[] = [];
  const follower = followSnapshots(() => assert.fail('no delta should miss its base'), (s) => rebuilt.push(s));
  for (const m of got) (m.event === 'snapshot' ? follower.whole(m.data as Snapshot) : follower.delta(m.data as SnapshotDelta));
  assert.deepEqual(rebuilt, JSON.parse(JSON.stringify(run)), 'every snapshot rebuilt as the box sent it');
  assert.ok(deltas.lines.every((line, i) => line === alsoDeltas.lines[i]), 'one line, the same bytes, for every delta console');
  assert.deepEqual(events(whole.lines).map((m) => m.event), run.map(() => 'snapshot'));
  assert.deepEqual(events(whole.lines).at(-1)!.data, JSON.parse(JSON.stringify(run.at(-1))));

  // a console closed hears nothing more
  deltas.session.close();
  emit('snapshot', { ...run.at(-1)!, seq: 1000 });
  assert.equal(deltas.lines.length, run.length);
  assert.equal(whole.lines.length, run.length + 1);
  sessions.close();
});
