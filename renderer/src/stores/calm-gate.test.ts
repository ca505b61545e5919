// A calm slice's timing: its first change shows at once, a burst of changes within a period shows once
// (the latest value, at the period's end), and a store change that leaves the slice as it is costs nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CalmGate, type CalmClock } from './calm-gate.js';

function fakeClock(): CalmClock & { advance(ms: number): void } {
  let now = 1_000_000;
  let tasks: Array<{ at: number; task: () => void }> = [];
  return {
    now: () => now,
    later(task, ms) {
      const entry = { at: now + ms, task };
      tasks.push(entry);
      return () => void (tasks = tasks.filter((t) => t !== entry));
    },
    advance(ms) {
      now += ms;
      const due = tasks.filter((t) => t.at <= now);
      tasks = tasks.filter((t) => t.at > now);
      due.forEach((t) => t.task());
    },
  };
}

function rig() {
  const clock = fakeClock();
  const store = { totals: null as string | null, connection: 'connecting' };
  const shown: Array<string | null> = [];
  const gate = new CalmGate(() => store.totals, (value) => shown.push(value), 1000, clock);
  return { clock, store, shown, gate };
}

test('the slice\'s first change shows at once, even after store changes that left it as it was', () => {
  const { clock, store, shown, gate } = rig();
  store.connection = 'live';
  gate.changed(); // the connection's state: not the slice's
  clock.advance(200);
  store.totals = '1 of 2 boxes connected';
  gate.changed();
  assert.deepEqual(shown, ['1 of 2 boxes connected']);
});

test('a burst of changes within a period shows once, the latest value, at the period\'s end', () => {
  const { clock, store, shown, gate } = rig();
  store.totals = 'a';
  gate.changed();
  for (const value of ['b', 'c', 'd']) {
    clock.advance(100);
    store.totals = value;
    gate.changed();
  }
  assert.deepEqual(shown, ['a']);
  clock.advance(700);
  assert.deepEqual(shown, ['a', 'd']);
  clock.advance(5000);
  assert.deepEqual(shown, ['a', 'd'], 'nothing more without a change');
});

test('a value changed and back within the period is not shown again; stop cancels what is pending', () => {
  const { clock, store, shown, gate } = rig();
  store.totals = 'a';
  gate.changed();
  store.totals = 'b';
  gate.changed();
  store.totals = 'a';
  gate.changed();
  clock.advance(1000);
  assert.deepEqual(shown, ['a']);
  store.totals = 'c';
  gate.changed();
  clock.advance(100);
  store.totals = 'd';
  gate.changed();
  gate.stop();
  clock.advance(5000);
  assert.deepEqual(shown, ['a', 'c']);
});
