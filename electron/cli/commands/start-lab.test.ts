// `gpushare start --lab`: the Lab view on loopback over the lab list's boxes, no engine of its own.
// Flags that only apply to an engine are refused, no boxes is an error naming the files, and the
// served view's WebSocket gives the lab (a live box, a down one with why) and answers lab.where;
// a box's console through it is that box's engine.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { applyLabUpdate, type LabConsoleState, type LabConsoleUpdate } from '../../../shared/lab-console.js';
import { cliRig } from '../testing/cli-rig.js';
import { CLI_PATH } from '../testing/compiled-cli.js';
import { startServeBox, type ServeBox } from '../testing/serve-box.js';

const rig = cliRig('start-lab');
after(() => rig.dispose());
const noAdminList = { GPUSHARE_LAB_FILE: join(rig.home, 'no-admin-lab.json') };

test('start --lab refuses the flags of an engine it does not start, and says where it looked when no box is listed', async () => {
  const flagged = await rig.gpushare(['start', '--lab', '--simulate', '--metrics', '9400'], noAdminList);
  assert.equal(flagged.code, 2);
  assert.match(flagged.stderr, /--lab starts no engine and always serves the browser console: drop --simulate, --metrics\./);
  const none = await rig.gpushare(['start', '--lab'], noAdminList);
  assert.equal(none.code, 1);
  assert.match(none.stderr, new RegExp(`No lab boxes: neither ${join(rig.home, 'no-admin-lab.json')} nor ${join(rig.home, 'config', 'gpushare', 'lab.json')} lists any`));
});

/** The messages a WebSocket to `url` gets until `done` holds of them (bounded). */
function messagesUntil(url: string, done: (messages: Array<Record<string, unknown>>) => boolean, send: unknown[] = []): Promise<{ messages: Array<Record<string, unknown>>; close?: { code: number; reason: string } }> {
  const u = new URL(url);
  const ws = new WebSocket(url.replace(/^http/, 'ws').replace(/\/\?/, '/api?'), { origin: `http://${u.host}` });
  const messages: Array<Record<string, unknown>> = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no end in 30 s: ${JSON.stringify(messages).slice(0, 2000)}`)), 30_000);
    ws.on('open', () => send.forEach((m) => ws.send(JSON.stringify(m))));
    ws.on('message', (data) => {
      messages.push(JSON.parse(String(data)) as Record<string, unknown>);
      if (done(messages)) {
        clearTimeout(timer);
        ws.close();
        resolve({ messages });
      }
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ messages, close: { code, reason: String(reason) } });
    });
    ws.on('error', reject);
  });
}

test('start --lab serves the Lab view: a live box and a down one with its error, lab.where, and a box\'s console through it', { timeout: 120_000 }, async (t) => {
  const boxes: ServeBox[] = [];
  t.after(() => Promise.all(boxes.map((b) => b.stop())));
  boxes.push(await startServeBox(join(rig.home, 'boxes'), 'live', 'a100-40gb'));
  mkdirSync(join(rig.home, 'config', 'gpushare'), { recursive: true, mode: 0o700 });
  writeFileSync(join(rig.home, 'config', 'gpushare', 'lab.json'), JSON.stringify({ boxes: [{ name: 'live', socket: boxes[0].socketPath }, { name: 'gone', socket: join(rig.home, 'nobody.sock') }] }), { mode: 0o600 });
  const start = spawn(process.execPath, [CLI_PATH, 'start', '--lab', '--port', '0'], { env: { ...rig.env, ...noAdminList, DISPLAY: '', WAYLAND_DISPLAY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
  t.after(async () => {
    start.kill('SIGTERM');
    assert.equal(await exited, 0, 'it stops cleanly on SIGTERM');
  });
  let output = '';
  start.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    start.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      const match = /^gpushare lab console: (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+&lab=1)$/m.exec(output);
      if (match && output.includes('boxes: live, gone')) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`gpushare start --lab exited (${code}): ${output}`)));
  });

  /** The lab as the updates so far make it (the first whole, then the rows that changed). */
  const labOf = (messages: Array<Record<string, unknown>>): LabConsoleState | null =>
    messages.filter((m) => m.event === 'lab').reduce<LabConsoleState | null>((state, m) => applyLabUpdate(state, m.data as LabConsoleUpdate), null);
  const settled = (u: LabConsoleState | null): boolean => !!u && u.view.boxes[0]?.state === 'connected' && u.view.boxes[0].gpus.length === 1 && u.view.boxes[1]?.state === 'down';
  const where = { kind: 'request', id: 7, method: 'lab.where', params: { memoryBytes: 1024 ** 3, gpus: 1, priority: 'normal' } };
  const { messages } = await messagesUntil(url, (all) => settled(labOf(all)));
  assert.equal((messages[0].data as LabConsoleUpdate).whole, true, 'the whole lab first');
  assert.ok(messages.slice(1).every((m) => !(m.data as LabConsoleUpdate).whole), 'then what changed');
  const update = labOf(messages)!;
  assert.match(update.view.boxes[0].gpus[0].name, /A100/);
  assert.match(update.view.boxes[1].status, /^down since \d\d:\d\d:\d\d UTC \(next try in \d+ s\): gone: /);
  const asked = await messagesUntil(url, (all) => all.some((m) => m.id === 7), [where]);
  const answer = asked.messages.find((m) => m.id === 7)!.result as { places: Array<{ box: string; gpus: number[] }>; notNow: Array<{ box: string; reason: string }> };
  assert.deepEqual(answer.places.map((p) => [p.box, p.gpus]), [['live', [0]]]);
  assert.deepEqual(answer.notNow.map((n) => n.box), ['gone']);

  // a box's console through the host: that box's engine answers (its GPU), and a box that is down closes with why
  const live = await messagesUntil(url.replace('lab=1', 'box=live'), (all) => all.some((m) => m.id === 1), [{ kind: 'request', id: 1, method: 'snapshot.latest', params: {} }]);
  const snapshot = live.messages.find((m) => m.id === 1)!.result as { gpus: Array<{ name: string }> };
  assert.match(snapshot.gpus[0].name, /A100/);
  const gone = await messagesUntil(url.replace('lab=1', 'box=gone'), () => false);
  assert.equal(gone.close?.code, 1011);
  assert.match(gone.close!.reason, /^gone is not connected: down since/);
});
