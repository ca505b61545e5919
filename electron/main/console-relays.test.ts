// The main process's table of window relays: a page's first message opens its relay, chosen by the
// page (this box's engine, the Lab view, a box); a window that shows another page gets a new one
// even when a message of the old page comes first; the engine's loss is told to engine windows only. The
// last test has a real hub, in a child process as in the app.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FakeBox } from '../engine/lab/testing/fake-box.js';
import { forkNodeHub } from '../engine/lab/testing/node-hub-process.js';
import { until } from '../testing/until.js';
import { consoleRelays } from './console-relays.js';
import { desktopLab, type DesktopLab } from './lab-windows.js';
import type { LineConnection } from './line-connection.js';
import type { ToWindow, ToWindowOrText } from './window-relay.js';

const PAGE = 'app://console/index.html';

/** A stand-in engine connection that records what it was sent, and a stand-in lab whose relays do the same. */
function standIns() {
  const toEngine: unknown[] = [];
  const toLab: Array<{ query: string; message: unknown }> = [];
  const closed: string[] = [];
  const connection: LineConnection = { send: (m) => void toEngine.push(m), onMessage: () => () => undefined, onClose: () => () => undefined, closed: false, close: () => void closed.push('engine') };
  const lab: DesktopLab = {
    status: () => ({ boxes: ['box1'], problem: null }),
    openRelay: (query) => ({ receive: (message) => void toLab.push({ query: query.toString(), message }), close: () => void closed.push(`lab ${query}`) }),
    close: () => undefined,
  };
  const relays = consoleRelays<number>({ connect: async () => connection, whyClosed: () => 'gone' }, lab);
  return { relays, toEngine, toLab, closed };
}
const request = (id: number, method: string) => ({ kind: 'request', id, method, params: {} });
const settle = () => new Promise((resolve) => setImmediate(resolve));
/** As the preload takes it: the hub's lines come as their JSON text. */
const asMessage = (m: ToWindowOrText): ToWindow => (typeof m === 'string' ? (JSON.parse(m) as ToWindow) : m);

test('each window\'s page chooses its relay; loading another page (a message of it first) replaces the relay', async () => {
  const { relays, toEngine, toLab, closed } = standIns();
  const heard: ToWindow[] = [];
  relays.receive(1, PAGE, request(1, 'jobs.list'), (m) => heard.push(asMessage(m)));
  relays.receive(1, `${PAGE}#reports`, request(2, 'reports.query'), (m) => heard.push(asMessage(m))); // same page, another tab
  await settle();
  assert.deepEqual(toEngine.map((m) => (m as { method: string }).method), ['jobs.list', 'reports.query']);
  relays.receive(1, `${PAGE}?lab=1`, request(1, 'lab.where'), (m) => heard.push(asMessage(m)));
  assert.deepEqual(closed, ['engine'], 'the engine relay of the page before is closed');
  relays.receive(1, `${PAGE}?box=box1`, request(1, 'jobs.list'), (m) => heard.push(asMessage(m)));
  relays.receive(2, `${PAGE}?box=box1`, request(1, 'jobs.list'), (m) => heard.push(asMessage(m)));
  assert.deepEqual(toLab.map((l) => l.query), ['lab=1', 'box=box1', 'box=box1']);
  assert.deepEqual(closed, ['engine', 'lab lab=1']);
  assert.equal(toEngine.length, 2, 'no Lab or box page reached this box\'s engine');
  relays.close();
  assert.deepEqual(closed, ['engine', 'lab lab=1', 'lab box=box1', 'lab box=box1']);
});

test('the engine stopping is told to the windows on it, not to a Lab window or a box\'s console', async () => {
  const { relays } = standIns();
  const heard = new Map<number, ToWindow[]>();
  const to = (id: number) => (m: ToWindowOrText) => heard.set(id, [...(heard.get(id) ?? []), asMessage(m)]);
  relays.receive(1, PAGE, request(1, 'jobs.list'), to(1));
  relays.receive(2, `${PAGE}?lab=1`, request(1, 'lab.where'), to(2));
  relays.receive(3, `${PAGE}?box=box1`, request(1, 'jobs.list'), to(3));
  await settle();
  heard.clear();
  relays.engineLost('The engine stopped.');
  assert.deepEqual([...heard.keys()], [1]);
  assert.deepEqual(heard.get(1)!.at(-1), { kind: 'connection', state: 'closed', detail: 'The engine stopped.' });
  relays.close();
});

test('with the hub in its own process (child_process.fork): a box page\'s relay ends when its window shows another page, and nothing of the hub reaches the next page', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-console-relays-'));
  const box = new FakeBox(join(dir, 'f.sock'), 'bob');
  await box.start();
  const lab = desktopLab({ readList: () => ({ boxes: [{ name: 'f', route: { kind: 'socket', path: box.path } }], files: [], looked: { admin: '', own: '' } }), forkHub: () => forkNodeHub(), hubOptions: { socketDir: join(dir, 'lab') } });
  const toEngine: unknown[] = [];
  const connection: LineConnection = { send: (m) => void toEngine.push(m), onMessage: () => () => undefined, onClose: () => () => undefined, closed: false, close: () => undefined };
  const relays = consoleRelays<number>({ connect: async () => connection, whyClosed: () => 'gone' }, lab);
  t.after(async () => {
    relays.close();
    lab.close();
    await box.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const heard: ToWindow[] = [];
  relays.receive(1, `${PAGE}?box=f`, { kind: 'subscribe', events: ['snapshot'] }, (m) => heard.push(asMessage(m)));
  relays.receive(1, `${PAGE}?box=f`, request(1, 'session.whoami'), (m) => heard.push(asMessage(m)));
  const whoami = await until('box f\'s answer', () => heard.find((m) => m.kind === 'response' && m.id === 1));
  assert.equal((whoami as { result: { user: string } }).result.user, 'bob', 'box f\'s daemon answered, through the hub\'s process');
  await until('a snapshot of box f', () => heard.some((m) => m.kind === 'event' && m.event === 'snapshot'));
  // the window loads this box's console: its first message comes from there
  relays.receive(1, PAGE, request(1, 'jobs.list'), (m) => heard.push(asMessage(m)));
  const seenAtSwitch = heard.length;
  await until('the engine to get the new page\'s request', () => toEngine.length === 1);
  const seq = box.latestSeq;
  await until('box f to tick five more times', () => box.latestSeq >= seq + 5);
  await settle();
  assert.deepEqual(heard.slice(seenAtSwitch), [{ kind: 'connection', state: 'open', detail: null }], 'the new page hears its own connection open, and nothing of box f');
});
