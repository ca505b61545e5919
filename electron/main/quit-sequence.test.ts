// Quit with a fake engine link: the app exits only after the engine's stop has finished, a second
// quit meanwhile (a second Ctrl-C, the tray's Quit again) does not cut it short, and a stop that
// never ends is bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EngineExit } from './engine-link.js';
import { quitSequence } from './quit-sequence.js';

function rig(stop: () => Promise<EngineExit | null>, waitMs = 60_000) {
  const log: string[] = [];
  let exited: () => void = () => undefined;
  const exitCalled = new Promise<void>((resolve) => (exited = resolve));
  const onBeforeQuit = quitSequence({
    closeDesktop: () => log.push('close desktop'),
    stopEngine: () => {
      log.push('stop engine');
      return stop().then((exit) => (log.push('engine stopped'), exit));
    },
    exit: (code) => {
      log.push(`exit ${code}`);
      exited();
    },
    say: (line) => log.push(line),
    waitMs,
  });
  const quitEvent = () => {
    const event = { prevented: false, preventDefault: () => void (event.prevented = true) };
    onBeforeQuit(event);
    return event;
  };
  return { log, quitEvent, exitCalled };
}

const cleanExit: EngineExit = { code: 0, signal: null, clean: true };

test('before-quit is held until the engine has stopped; then the app exits 0', async () => {
  let finish: (exit: EngineExit) => void = () => undefined;
  const { log, quitEvent, exitCalled } = rig(() => new Promise((resolve) => (finish = resolve)));
  assert.equal(quitEvent().prevented, true, 'Electron must not quit on its own');
  assert.deepEqual(log, ['close desktop', 'stop engine']);
  finish(cleanExit);
  await exitCalled;
  assert.deepEqual(log, ['close desktop', 'stop engine', 'engine stopped', 'exit 0']);
});

test('a second quit while the engine stops is held too, and stops nothing twice', async () => {
  let finish: (exit: EngineExit) => void = () => undefined;
  const { log, quitEvent, exitCalled } = rig(() => new Promise((resolve) => (finish = resolve)));
  quitEvent();
  assert.equal(quitEvent().prevented, true, 'the second before-quit would otherwise end the app before the engine restored its parked jobs');
  finish(cleanExit);
  await exitCalled;
  assert.deepEqual(log, ['close desktop', 'stop engine', 'engine stopped', 'exit 0']);
});

test('an engine that stopped uncleanly is reported before exit', async () => {
  const { log, quitEvent, exitCalled } = rig(async () => ({ code: null, signal: 'SIGKILL', clean: false }));
  quitEvent();
  await exitCalled;
  assert.deepEqual(log, ['close desktop', 'stop engine', 'engine stopped', 'gpushare: the personal engine did not stop cleanly (SIGKILL).', 'exit 0']);
});

test('a stop that never ends is given up after the bounded wait, saying so', async () => {
  const { log, quitEvent, exitCalled } = rig(() => new Promise(() => undefined), 50);
  quitEvent();
  await exitCalled;
  assert.deepEqual(log, ['close desktop', 'stop engine', 'gpushare: the engine did not stop within 0.05 s; quitting without it.', 'exit 0']);
});

test('a stop that fails is reported, and the app still exits', async () => {
  const { log, quitEvent, exitCalled } = rig(async () => {
    throw new Error('The personal engine stopped before it answered (exit code 1).');
  });
  quitEvent();
  await exitCalled;
  assert.deepEqual(log, ['close desktop', 'stop engine', 'gpushare: The personal engine stopped before it answered (exit code 1).', 'exit 0']);
});
