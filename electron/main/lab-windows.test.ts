// The desktop app's Lab view, in Node with stand-ins: a hub in a real child process (child_process.fork,
// where the app uses Electron's utilityProcess) over stand-in box daemons (unix sockets, no ssh) serves a
// Lab window the lab, a box's console reaches that box's daemon and no other, a box going down ends its
// console with why (answering what was still waiting), a hub process that dies is told to its windows and
// the next Lab window starts another, and the page's URL alone decides whether a window talks to the hub
// or to this box's engine.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DESKTOP_LAB_STATUS } from '../../shared/bridge.js';
import type { LabBoxSpec } from '../../shared/lab.js';
import { LAB_EVENT, LAB_WHERE, type LabConsoleUpdate } from '../../shared/lab-console.js';
import { WINDOW_MESSAGE_LIMIT, type HubChild, type ToHub } from '../engine/lab/hub-process-protocol.js';
import { loadLabList } from '../engine/lab/lab-list.js';
import { FakeBox } from '../engine/lab/testing/fake-box.js';
import { forkNodeHub } from '../engine/lab/testing/node-hub-process.js';
import { until } from '../testing/until.js';
import { desktopLab, isLabPage, openConsoleRelay, servedBy, type DesktopLab } from './lab-windows.js';
import type { ToWindow, WindowRelay } from './window-relay.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-desktop-lab-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const PAGE = 'app://console/index.html';
const specs = (...names: string[]): LabBoxSpec[] => names.map((name) => ({ name, route: { kind: 'socket' as const, path: join(dir, `${name}.sock`) } }));
const looked = { admin: '/etc/gpushare/lab.json', own: '/home/alice/.config/gpushare/lab.json' };

/** Hub processes started through this fork, and the boxes each was told to reach. */
function recordingFork() {
  const hubs: Array<{ child: HubChild; boxes: string }> = [];
  const forkHub = (): HubChild => {
    const child = forkNodeHub();
    const hub = { child, boxes: '' };
    hubs.push(hub);
    return {
      get pid() {
        return child.pid;
      },
      post(message: ToHub) {
        if (message.kind === 'start') hub.boxes = message.boxes.map((b) => b.name).join();
        child.post(message);
      },
      onMessage: (listener) => child.onMessage(listener),
      onExit: (listener) => child.onExit(listener),
      kill: () => child.kill(),
    };
  };
  return { hubs, forkHub };
}

const quick = (socketDir: string) => ({ socketDir: join(dir, socketDir), firstRetryMs: 100, maxRetryMs: 200, timeoutMs: 2000 });

/** A desktop lab over these boxes, its hub (in a child process) quick to retry; and the hub processes it started. */
function labOver(boxes: LabBoxSpec[], socketDir: string): { lab: DesktopLab; hubs: ReturnType<typeof recordingFork>['hubs'] } {
  const { hubs, forkHub } = recordingFork();
  const lab = desktopLab({ readList: () => ({ boxes, files: [looked.own], looked }), forkHub, hubOptions: quick(socketDir) });
  return { lab, hubs };
}

/** Is this process gone? */
const gone = (pid: number | undefined): boolean => {
  try {
    process.kill(pid!, 0);
    return false;
  } catch {
    return true;
  }
};

/** A window: what it heard, and its relay (this box's engine: a stand-in that records what it was sent). */
function windowOn(page: string, lab: DesktopLab) {
  const heard: ToWindow[] = [];
  const toEngine: unknown[] = [];
  let engineRelays = 0;
  const engineRelay = (): WindowRelay => {
    engineRelays++;
    return { receive: (message) => toEngine.push(message), close: () => undefined };
  };
  const relay = openConsoleRelay(page, lab, engineRelay, (message) => heard.push(JSON.parse(typeof message === 'string' ? message : JSON.stringify(message)) as ToWindow)); // the hub's lines come as text, parsed by the preload
  let nextId = 1;
  const call = (method: string, params: unknown = {}): number => {
    const id = nextId++;
    relay.receive({ kind: 'request', id, method, params });
    return id;
  };
  const answer = (id: number) => until(`the answer to request ${id}`, () => heard.find((m) => m.kind === 'response' && m.id === id) as Extract<ToWindow, { kind: 'response' }> | undefined);
  const labUpdates = () => heard.filter((m): m is Extract<ToWindow, { kind: 'event' }> => m.kind === 'event' && (m.event as string) === LAB_EVENT).map((m) => m.data as unknown as LabConsoleUpdate);
  return { heard, relay, call, answer, labUpdates, toEngine, engineRelays: () => engineRelays };
}

test('the page decides: the Lab view and a box of the lab are the hub\'s, any other page is this box\'s engine', () => {
  assert.equal(isLabPage(`${PAGE}?lab=1`), true);
  assert.equal(isLabPage(`${PAGE}?box=box1`), true);
  assert.equal(isLabPage(PAGE), false);
  assert.equal(isLabPage(`${PAGE}#reports`), false);
  assert.equal(isLabPage('not a url'), false);
  assert.deepEqual([`${PAGE}?lab=1`, `${PAGE}?box=b1#reports`, `${PAGE}?lab=1&box=b2`, `${PAGE}#lab`].map(servedBy), ['lab', 'box:b1', 'box:b2', 'engine'], 'a page naming a box is that box\'s');
  const { lab, hubs } = labOver(specs('x'), 's0');
  const local = windowOn(`${PAGE}#reports`, lab);
  local.call('jobs.list');
  const statusId = local.call(DESKTOP_LAB_STATUS);
  assert.equal(local.engineRelays(), 1);
  assert.deepEqual(local.toEngine, [{ kind: 'request', id: 1, method: 'jobs.list', params: {} }], 'the engine gets its requests, not the Lab tab\'s question');
  assert.deepEqual(local.heard, [{ kind: 'response', id: statusId, ok: true, result: { boxes: ['x'], problem: null } }]);
  assert.equal(hubs.length, 0, 'asking whether there is a lab starts no hub');
  lab.close();
});

test('a Lab window hears the lab from a hub of stand-in boxes, and "where can I run" is answered; a box\'s command is refused there', async (t) => {
  const boxes = [new FakeBox(join(dir, 'a.sock'), 'alice'), new FakeBox(join(dir, 'b.sock'), 'alice')];
  for (const box of boxes) await box.start();
  const { lab, hubs } = labOver(specs('a', 'b'), 's1');
  t.after(async () => {
    lab.close();
    for (const box of boxes) await box.stop();
  });
  const w = windowOn(`${PAGE}?lab=1`, lab);
  w.relay.receive({ kind: 'subscribe', events: [LAB_EVENT] });
  assert.equal(hubs.length, 1, 'the hub starts with the first Lab window');
  await until('the window hears from the hub', () => w.labUpdates().length > 0);
  assert.deepEqual(w.heard[0], { kind: 'connection', state: 'open', detail: null });
  const first = w.labUpdates()[0];
  assert.ok(first?.whole, 'the window gets the whole lab at once');
  assert.deepEqual(first.names, ['a', 'b']);
  await until('both boxes connected in an update', () => w.labUpdates().some((u) => u.totals.connected === 2));
  const where = await w.answer(w.call(LAB_WHERE, { memoryBytes: 0, gpus: 1, priority: 'normal' }));
  assert.equal(where.ok, true, JSON.stringify(where));
  const refused = await w.answer(w.call('jobs.list'));
  assert.equal(refused.ok, false);
  assert.match((refused as { error: { message: string } }).error.message, /open that box from the Lab view/);
  assert.equal(w.engineRelays(), 0, 'a Lab window never reaches this box\'s engine');
  assert.ok(boxes.every((b) => !b.heard.includes('jobs.list') || b.heard.filter((m) => m === 'jobs.list').length === 1), 'the refused request reached no box (each heard only the hub\'s own jobs.list)');
  // a second Lab window shares the hub
  windowOn(`${PAGE}?lab=1`, lab).relay.receive({ kind: 'subscribe', events: [LAB_EVENT] });
  assert.equal(hubs.length, 1);
});

test('a box\'s console sends its requests to that box\'s daemon only, and hears that box\'s events', async (t) => {
  const a = new FakeBox(join(dir, 'c.sock'), 'alice');
  const b = new FakeBox(join(dir, 'd.sock'), 'bob');
  for (const box of [a, b]) await box.start();
  const { lab, hubs } = labOver(specs('c', 'd'), 's2');
  t.after(async () => {
    lab.close();
    for (const box of [a, b]) await box.stop();
  });
  // opened first, as a reload of the box's console: the hub starts now, and the box is waited for, not refused
  const w = windowOn(`${PAGE}?box=d`, lab);
  const whoami = w.call('session.whoami');
  const answered = await w.answer(whoami);
  assert.deepEqual((answered as { result: { user: string } }).result.user, 'bob', 'the answer is box d\'s daemon\'s');
  assert.deepEqual(w.heard[0], { kind: 'connection', state: 'open', detail: null });
  await until('both boxes connected to the hub (it asked each its policy)', () => a.heard.includes('policy.get') && b.heard.includes('policy.get'));
  assert.equal(hubs.length, 1);
  const aBefore = [...a.heard];
  const refusal = await w.answer(w.call('settings.get'));
  assert.deepEqual(refusal, { kind: 'response', id: 2, ok: false, error: { code: 'unsupported', message: 'settings.get' } }, 'the box\'s own refusal, in its words');
  assert.deepEqual(b.heard.filter((m) => m === 'settings.get'), ['settings.get']);
  assert.deepEqual(a.heard, aBefore, 'box c heard nothing of box d\'s console');
  await until('a snapshot event from box d', () => w.heard.some((m) => m.kind === 'event' && m.event === 'snapshot'));
  assert.equal(w.engineRelays(), 0);
});

test('a box going down ends its console with why, answering the request it had not answered; the Lab view shows it down; back, its console reconnects', async (t) => {
  const box = new FakeBox(join(dir, 'e.sock'), 'alice');
  await box.start();
  const { lab } = labOver(specs('e'), 's3');
  t.after(async () => {
    lab.close();
    await box.stop();
  });
  const labWindow = windowOn(`${PAGE}?lab=1`, lab);
  labWindow.relay.receive({ kind: 'subscribe', events: [LAB_EVENT] });
  const w = windowOn(`${PAGE}?box=e`, lab);
  await w.answer(w.call('session.whoami'));
  box.frozen = true; // the next request is heard, never answered
  const waiting = w.call('jobs.list');
  await until('box e to hear the request', () => box.heard.filter((m) => m === 'jobs.list').length === 2);
  await box.stop();
  const closed = await until('the console told its connection closed', () => w.heard.find((m) => m.kind === 'connection' && m.state === 'closed') as Extract<ToWindow, { kind: 'connection' }> | undefined);
  assert.match(closed.detail ?? '', /^e: (down since|reconnecting)/, closed.detail ?? '');
  assert.match(closed.detail ?? '', /; this console reconnects when e is back\.$/);
  const answered = await w.answer(waiting);
  assert.equal((answered as { error: { code: string } }).error.code, 'unavailable', 'the waiting request is answered: the link is gone');
  const after = await w.answer(w.call('jobs.list'));
  assert.equal((after as { error: { code: string } }).error.code, 'unavailable', 'a request after the end is refused at once');
  await until('the Lab view shows box e down', () => labWindow.labUpdates().some((u) => u.rows.some((r) => r.name === 'e' && r.state !== 'connected')));
  // a box that is not connected is refused with its state, not waited for
  const later = windowOn(`${PAGE}?box=e`, lab);
  const refused = await until('the new console closed', () => later.heard.find((m) => m.kind === 'connection' && m.state === 'closed') as Extract<ToWindow, { kind: 'connection' }> | undefined);
  assert.match(refused.detail ?? '', /^e is not connected: /);
  // the box comes back: both consoles open again, and their requests reach it
  box.frozen = false;
  await box.start();
  for (const console of [w, later]) {
    await until('the console open again', () => console.heard.filter((m) => m.kind === 'connection').at(-1)?.kind === 'connection' && (console.heard.filter((m) => m.kind === 'connection').at(-1) as { state: string }).state === 'open');
    const again = await console.answer(console.call('session.whoami'));
    assert.equal(again.ok, true, JSON.stringify(again));
  }
  later.relay.close();
  w.relay.close();
});

test('no lab list: no Lab tab; a list with a mistake: the tab, and the Lab view says the mistake; a Lab window without a list names the files; a list written or changed while the app runs is read', async (t) => {
  const home = join(dir, 'home');
  mkdirSync(join(home, 'gpushare'), { recursive: true });
  chmodSync(home, 0o755);
  const files = { admin: join(dir, 'no-admin.json'), own: join(home, 'gpushare', 'lab.json') };
  const { hubs, forkHub } = recordingFork();
  const opened = {
    get length() {
      return hubs.length;
    },
    /** The boxes each hub process was told to reach (once it said it was ready). */
    list: () => until('every hub process told its boxes', () => hubs.every((h) => h.boxes !== '') && hubs.map((h) => h.boxes)),
  };
  const lab = desktopLab({ readList: () => loadLabList(files), forkHub, hubOptions: quick('s4') });
  t.after(() => lab.close());
  assert.deepEqual(lab.status(), { boxes: [], problem: null });
  const w = windowOn(`${PAGE}?lab=1`, lab);
  w.relay.receive({ kind: 'subscribe', events: [LAB_EVENT] });
  const closed = await until('the Lab window told why', () => w.heard.find((m) => m.kind === 'connection') as Extract<ToWindow, { kind: 'connection' }> | undefined);
  assert.equal(closed.state, 'closed');
  assert.equal(closed.detail, `No lab boxes: neither ${files.admin} nor ${files.own} lists any. Write one like {"boxes": [{"name": "box1", "ssh": "box1"}]}.`);
  const refused = await w.answer(w.call(LAB_WHERE, { memoryBytes: 0, gpus: 1, priority: 'normal' }));
  assert.equal((refused as { error: { message: string } }).error.message, closed.detail);
  writeFileSync(files.own, '{"boxes": [{"name": "box1", "shh": "box1"}]}', { mode: 0o600 });
  const broken = lab.status();
  assert.deepEqual(broken.boxes, []);
  assert.match(broken.problem ?? '', /lab\.json: boxes\[0\] \("box1"\)/, broken.problem ?? '');
  const told = windowOn(`${PAGE}?lab=1`, lab); // the Lab tab (or the tray's Lab item) opened on it
  const mistake = await until('the Lab window told the mistake', () => told.heard.find((m) => m.kind === 'connection') as Extract<ToWindow, { kind: 'connection' }> | undefined);
  assert.deepEqual(mistake, { kind: 'connection', state: 'closed', detail: broken.problem }, 'the Lab window names the file, the entry and the key');
  told.relay.close();
  writeFileSync(files.own, '{"boxes": [{"name": "box1", "socket": "/nowhere.sock"}]}', { mode: 0o600 });
  assert.deepEqual(lab.status(), { boxes: ['box1'], problem: null });
  assert.equal(opened.length, 0, 'no hub was started for a list that was not there');
  w.relay.close();
  // written while the app runs: the Lab view opened next has the list's boxes
  const first = windowOn(`${PAGE}?lab=1`, lab);
  assert.deepEqual(await opened.list(), ['box1']);
  writeFileSync(files.own, '{"boxes": [{"name": "box1", "socket": "/nowhere.sock"}, {"name": "box2", "socket": "/nowhere2.sock"}]}', { mode: 0o600 });
  const second = windowOn(`${PAGE}?box=box1`, lab);
  assert.equal(opened.length, 1, 'while a window uses the hub, a changed list waits');
  first.relay.close();
  second.relay.close();
  windowOn(`${PAGE}?lab=1`, lab);
  assert.deepEqual(await opened.list(), ['box1', 'box1,box2'], 'with none, the Lab view opened next starts the hub on the changed list');
  await until('the first hub process ended', () => gone(hubs[0]!.child.pid));
  windowOn(`${PAGE}?box=box2`, lab);
  assert.equal(opened.length, 2, 'an unchanged list keeps its hub');
  const last = hubs[1]!.child;
  await until('the hub process running', () => last.pid !== undefined && !gone(last.pid));
  const pid = last.pid;
  lab.close();
  await until('the hub process ended with the app', () => gone(pid));
});

test('the hub process killed: every window on it hears that it stopped and why, what waited is answered; the next Lab window starts a new one', async (t) => {
  const box = new FakeBox(join(dir, 'k.sock'), 'alice');
  await box.start();
  const { lab, hubs } = labOver(specs('k'), 's5');
  t.after(async () => {
    lab.close();
    await box.stop();
  });
  const labWindow = windowOn(`${PAGE}?lab=1`, lab);
  labWindow.relay.receive({ kind: 'subscribe', events: [LAB_EVENT] });
  const boxWindow = windowOn(`${PAGE}?box=k`, lab);
  await boxWindow.answer(boxWindow.call('session.whoami'));
  await until('box k connected in the Lab view', () => labWindow.labUpdates().some((u) => u.totals.connected === 1));
  box.frozen = true; // the next request is heard, never answered
  const waiting = boxWindow.call('jobs.list');
  await until('box k to hear the request', () => box.heard.filter((m) => m === 'jobs.list').length === 2);
  const killed = hubs[0]!.child.pid!;
  process.kill(killed, 'SIGKILL');
  const why = 'The lab hub stopped (killed by SIGKILL). Reload this window, or open the Lab view again, to start a new one.';
  for (const w of [labWindow, boxWindow]) {
    const closed = await until('the window told the hub stopped', () => w.heard.find((m) => m.kind === 'connection' && m.state === 'closed') as Extract<ToWindow, { kind: 'connection' }> | undefined);
    assert.equal(closed.detail, why);
  }
  assert.deepEqual(await boxWindow.answer(waiting), { kind: 'response', id: waiting, ok: false, error: { code: 'unavailable', message: why } }, 'the request the hub held is answered');
  const after = await labWindow.answer(labWindow.call(LAB_WHERE, { memoryBytes: 0, gpus: 1, priority: 'normal' }));
  assert.deepEqual((after as { error: unknown }).error, { code: 'unavailable', message: why }, 'a request after it is refused at once');
  box.frozen = false;
  // a reload of the Lab window (its old relay not even closed yet): a new hub process, over the same list
  const next = windowOn(`${PAGE}?lab=1`, lab);
  next.relay.receive({ kind: 'subscribe', events: [LAB_EVENT] });
  assert.equal(hubs.length, 2, 'a new hub process');
  assert.notEqual(hubs[1]!.child.pid, killed);
  await until('box k connected again, through the new hub', () => next.labUpdates().some((u) => u.totals.connected === 1));
});

test('a window\'s request past the bound is refused by the main process and never reaches the hub', async (t) => {
  const box = new FakeBox(join(dir, 'l.sock'), 'alice');
  await box.start();
  const { lab } = labOver(specs('l'), 's6');
  t.after(async () => {
    lab.close();
    await box.stop();
  });
  const w = windowOn(`${PAGE}?box=l`, lab);
  await w.answer(w.call('session.whoami'));
  const huge = await w.answer(w.call('jobs.submit', { argv: ['x'.repeat(WINDOW_MESSAGE_LIMIT)] }));
  assert.equal((huge as { error: { code: string } }).error.code, 'invalid-request');
  assert.match((huge as { error: { message: string } }).error.message, new RegExp(`at most ${WINDOW_MESSAGE_LIMIT}`));
  assert.ok(!box.heard.includes('jobs.submit'), 'box l never heard it');
  const next = await w.answer(w.call('session.whoami'));
  assert.equal(next.ok, true, 'the window goes on');
});
