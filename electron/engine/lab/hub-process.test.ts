// The lab hub's process and the app: what crosses between them is checked and bounded on both sides, and a
// hub that ends of an error nobody caught says it in one line that the app shows with its exit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fromHubMessage, HUB_LINE_LIMIT, hubChildOver, hubExitWhy, toHubMessage, WINDOW_MESSAGE_LIMIT } from './hub-process-protocol.js';

test('the hub takes only the app\'s four messages, a window\'s at most WINDOW_MESSAGE_LIMIT long; the app takes only the hub\'s two, a line at most HUB_LINE_LIMIT', () => {
  assert.deepEqual(toHubMessage({ kind: 'window', relay: 1, text: '{}' }), { kind: 'window', relay: 1, text: '{}' });
  assert.equal(toHubMessage({ kind: 'window', relay: 1, text: 'x'.repeat(WINDOW_MESSAGE_LIMIT + 1) }), null);
  assert.equal(toHubMessage({ kind: 'window', relay: 0, text: '{}' }), null, 'relays are numbered from 1');
  assert.equal(toHubMessage({ kind: 'open', relay: 1.5, query: 'lab=1' }), null);
  assert.equal(toHubMessage({ kind: 'start', boxes: 'box1', options: {} }), null);
  assert.equal(toHubMessage({ kind: 'exit' }), null);
  assert.deepEqual(fromHubMessage({ kind: 'ready', extra: 1 }), { kind: 'ready' });
  assert.equal(fromHubMessage({ kind: 'window', relay: 2, line: 'x'.repeat(HUB_LINE_LIMIT + 1) }), null);
  assert.equal(fromHubMessage({ kind: 'window', relay: 2, line: { kind: 'event' } }), null, 'a line is text');
  assert.deepEqual(fromHubMessage({ kind: 'window', relay: 2, line: '{}', answers: 7, more: 1 }), { kind: 'window', relay: 2, line: '{}', answers: 7 });
  assert.equal(fromHubMessage({ kind: 'window', relay: 2, line: '{}', answers: '7' }), null, 'the request it answers is an id');
  assert.equal(hubExitWhy(null, 'SIGKILL', null), 'killed by SIGKILL');
  assert.equal(hubExitWhy(70, null, 'boom'), 'exit code 70: boom');
});

test('a hub ending of an error nobody caught: the app hears its exit and the error\'s own words', async () => {
  const hubProcess = new URL('./hub-process.js', import.meta.url).href;
  const script = `import { endOnUncaughtError } from ${JSON.stringify(hubProcess)}; endOnUncaughtError(); setTimeout(() => { throw new Error('the hub broke\\nat a second line'); }, 10);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  const echoed: string[] = [];
  const hub = hubChildOver(
    {
      pid: () => child.pid,
      post: () => undefined,
      onMessage: () => undefined,
      kill: () => void child.kill(),
      stderr: child.stderr,
      onEnd: (listener) => void child.once('exit', listener),
    },
    (text) => echoed.push(text),
  );
  const why = await new Promise<string>((resolve) => hub.onExit(resolve));
  assert.equal(why, 'exit code 70: the hub broke');
  assert.match(echoed.join(''), /at a second line/, 'the rest of what it wrote goes on to the app\'s stderr');
  assert.equal(hub.pid, undefined, 'no pid once it has ended');
});
