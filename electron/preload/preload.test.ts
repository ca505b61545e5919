// The desktop preload (a sandboxed script that cannot import our modules) repeats the API's event list,
// the Lab view's and the IPC channel names: run as Electron runs it, it must forward every event
// shared/bridge.ts declares, and no other.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runInNewContext } from 'node:vm';
import { BRIDGE_EVENTS, DESKTOP_LAB_STATUS, IPC_MESSAGE_CHANNEL, IPC_REQUEST_CHANNEL, LAB_BRIDGE_EVENTS, type GpushareBridge } from '../../shared/bridge.js';

const PRELOAD = new URL('./preload.cjs', import.meta.url);
/** A value made in the preload's own context, as plain data of this one (the comparison checks prototypes). */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** The compiled preload run with a stand-in for Electron's ipcRenderer and contextBridge; it may require nothing else. */
function loadPreload() {
  const sent: Array<{ channel: string; message: unknown }> = [];
  const handlers = new Map<string, (event: unknown, message: unknown) => void>();
  let exposed: { name: string; api: GpushareBridge } | null = null;
  const electron = {
    ipcRenderer: {
      send: (channel: string, message: unknown) => sent.push({ channel, message }),
      on: (channel: string, handler: (event: unknown, message: unknown) => void) => handlers.set(channel, handler),
    },
    contextBridge: { exposeInMainWorld: (name: string, api: GpushareBridge) => (exposed = { name, api }) },
  };
  const require = (name: string): unknown => {
    if (name === 'electron') return electron;
    throw new Error(`a sandboxed preload cannot require ${name}`);
  };
  const module = { exports: {} };
  runInNewContext(readFileSync(PRELOAD, 'utf8'), { require, module, exports: module.exports });
  assert.ok(exposed, 'the preload exposes its bridge');
  const { name, api } = exposed as { name: string; api: GpushareBridge };
  const deliver = (message: unknown): void => handlers.get(IPC_MESSAGE_CHANNEL)?.({}, message);
  return { name, api, sent, handlers, deliver };
}

test('the desktop preload forwards every event the API and the Lab view declare, each asked for on the request channel', () => {
  const { name, api, sent, handlers, deliver } = loadPreload();
  assert.equal(name, 'gpushare');
  assert.deepEqual([...handlers.keys()], [IPC_MESSAGE_CHANNEL], 'it listens on the message channel only');
  assert.ok(LAB_BRIDGE_EVENTS.every((event) => BRIDGE_EVENTS.includes(event)), "the Lab view's events are among the bridge's");
  const heard: Array<[string, unknown]> = [];
  for (const event of BRIDGE_EVENTS) api.on(event, (data) => heard.push([event, data]));
  // a snapshot.delta listener asks for the snapshot event as deltas
  const asked = (event: string) => (event === 'snapshot.delta' ? { kind: 'subscribe', events: ['snapshot'], snapshotDeltas: true } : { kind: 'subscribe', events: [event] });
  assert.deepEqual(plain(sent), BRIDGE_EVENTS.map((event) => ({ channel: IPC_REQUEST_CHANNEL, message: asked(event) })));
  for (const event of BRIDGE_EVENTS) deliver({ kind: 'event', event, data: { about: event } });
  assert.deepEqual(plain(heard), BRIDGE_EVENTS.map((event) => [event, { about: event }]));
});

test('the desktop preload sends requests on the request channel and answers them from the message channel', async () => {
  const { api, sent, deliver } = loadPreload();
  const answer = api.call('settings.get', {});
  assert.deepEqual(plain(sent), [{ channel: IPC_REQUEST_CHANNEL, message: { kind: 'request', id: 1, method: 'settings.get', params: {} } }]);
  deliver({ kind: 'response', id: 1, ok: true, result: { timelineMinutes: 5 } });
  assert.deepEqual(plain(await answer), { ok: true, result: { timelineMinutes: 5 } });
  // the Lab tab's question goes the same way: the main process answers it
  const lab = api.call(DESKTOP_LAB_STATUS, {});
  assert.deepEqual(plain(sent[1]), { channel: IPC_REQUEST_CHANNEL, message: { kind: 'request', id: 2, method: DESKTOP_LAB_STATUS, params: {} } });
  deliver({ kind: 'response', id: 2, ok: true, result: { boxes: ['box1'], problem: null } });
  assert.deepEqual(plain(await lab), { ok: true, result: { boxes: ['box1'], problem: null } });
  let told = false;
  for (const undeclared of ['no-such-event', 'lab.where', 'labs']) api.on(undeclared as never, () => (told = true));
  for (const undeclared of ['no-such-event', 'lab.where', 'labs']) deliver({ kind: 'event', event: undeclared, data: 1 });
  assert.equal(told, false, 'an event neither the API nor the Lab view declares is not listened for');
  assert.equal(sent.length, 2, 'and not subscribed to');
});

test('the desktop preload takes a message as its JSON text too (the lab hub\'s lines, passed on unread by the main process), and drops text that is no JSON', async () => {
  const { api, deliver } = loadPreload();
  const heard: unknown[] = [];
  api.on('lab', (data) => heard.push(data));
  deliver(JSON.stringify({ kind: 'event', event: 'lab', data: { whole: true } }));
  deliver('{"kind":"event","event":"lab","data":');
  assert.deepEqual(plain(heard), [{ whole: true }]);
  const answer = api.call('lab.where', {});
  deliver(JSON.stringify({ kind: 'response', id: 1, ok: false, error: { code: 'unavailable', message: 'The lab hub stopped.' } }));
  assert.deepEqual(plain(await answer), { ok: false, error: { code: 'unavailable', message: 'The lab hub stopped.' } });
  let told: unknown = null;
  api.on('connection', (data) => (told = data));
  deliver(JSON.stringify({ kind: 'connection', state: 'closed', detail: 'why' }));
  assert.deepEqual(plain(told), { state: 'closed', detail: 'why' });
});
