// The start-up sequence on a recording shell: the order of its steps, and each way it can fail.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApp, type StartupShell } from './startup.js';

interface Script {
  lock?: boolean;
  console?: () => void;
  engine?: () => Promise<string>;
  view?: () => Promise<string>;
  quittingAfter?: string;
}

function recordingShell(script: Script = {}) {
  const steps: string[] = [];
  const shell: StartupShell<string, string> = {
    requestSingleInstanceLock: () => (steps.push('lock'), script.lock ?? true),
    beforeReady: () => void steps.push('before ready'),
    whenReady: async () => void steps.push('ready'),
    prepareConsole: () => {
      steps.push('prepare console');
      script.console?.();
    },
    openEngine: () => {
      steps.push('open engine');
      return (script.engine ?? (async () => 'link'))().then((link) => (steps.push('engine answers'), link));
    },
    showWindow: () => void steps.push('window'),
    errorDialog: (title, body) => void steps.push(`dialog: ${title}: ${body}`),
    exit: (code) => void steps.push(`exit ${code}`),
    quitting: () => script.quittingAfter !== undefined && steps.includes(script.quittingAfter),
    openView: (link) => (steps.push(`open view on ${link}`), (script.view ?? (async () => 'view'))()),
    closeView: (view) => void steps.push(`close ${view}`),
    attachDesktop: async (_link, view) => void steps.push(`tray and notifications on ${view}`),
    log: (line) => void steps.push(`log: ${line}`),
  };
  return { shell, steps };
}

test('the lock first, then ready, the console, the engine started, the window before the engine answers, the tray last', async () => {
  const { shell, steps } = recordingShell();
  assert.equal(await startApp(shell), 'running');
  assert.deepEqual(steps, ['lock', 'before ready', 'ready', 'prepare console', 'open engine', 'window', 'engine answers', 'open view on link', 'tray and notifications on view']);
});

test('a second instance returns at the lock: nothing else starts (no engine, no window)', async () => {
  const { shell, steps } = recordingShell({ lock: false });
  assert.equal(await startApp(shell), 'second-instance');
  assert.deepEqual(steps, ['lock', 'exit 0']);
});

test('an engine or driver that fails to open is shown in a dialog, and the app quits with status 1', async () => {
  const { shell, steps } = recordingShell({ engine: async () => Promise.reject(new Error('The personal engine stopped before it answered (exit code 1): Could not load libnvidia-ml.so.1.')) });
  assert.equal(await startApp(shell), 'no-engine');
  assert.deepEqual(steps.slice(-3), ['window', 'dialog: gpushare could not start its engine: The personal engine stopped before it answered (exit code 1): Could not load libnvidia-ml.so.1.', 'exit 1']);
});

test('a console that cannot be shown (no renderer build) is a dialog and an exit before any engine starts', async () => {
  const { shell, steps } = recordingShell({ console: () => { throw new Error('The console is not built: /opt/gpushare/dist/renderer/index.html is missing.'); } });
  assert.equal(await startApp(shell), 'no-console');
  assert.deepEqual(steps, ['lock', 'before ready', 'ready', 'prepare console', 'dialog: gpushare cannot show its console: The console is not built: /opt/gpushare/dist/renderer/index.html is missing.', 'exit 1']);
});

test('without its own engine view the window still works, saying why there is no tray', async () => {
  const { shell, steps } = recordingShell({ view: async () => Promise.reject(new Error('The engine closed the connection.')) });
  assert.equal(await startApp(shell), 'window-only');
  assert.equal(steps.at(-1), 'log: gpushare: no tray or notifications this time: The engine closed the connection.');
  assert.ok(!steps.some((s) => s.startsWith('exit')), 'the app keeps running with its window');
});

test('a quit while the engine starts attaches nothing (before-quit stops the engine), and a failing engine then is no dialog', async () => {
  const quitEarly = recordingShell({ quittingAfter: 'engine answers' });
  assert.equal(await startApp(quitEarly.shell), 'quit-while-starting');
  assert.equal(quitEarly.steps.at(-1), 'engine answers');

  const quitThenFail = recordingShell({ quittingAfter: 'window', engine: async () => Promise.reject(new Error('stopped')) });
  assert.equal(await startApp(quitThenFail.shell), 'quit-while-starting');
  assert.ok(!quitThenFail.steps.some((s) => s.startsWith('dialog')));

  const quitDuringView = recordingShell({ quittingAfter: 'open view on link' });
  assert.equal(await startApp(quitDuringView.shell), 'quit-while-starting');
  assert.equal(quitDuringView.steps.at(-1), 'close view');
});

test('the lock and the before-ready registrations run in the same tick as the call (app:// must be registered before Electron is ready)', async () => {
  const { shell, steps } = recordingShell();
  const started = startApp(shell);
  assert.deepEqual(steps, ['lock', 'before ready', 'ready'], 'synchronously, before any await');
  await started;
});
