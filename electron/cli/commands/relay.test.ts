// `gpushare relay --stdio`: the API between stdin/stdout and a daemon's socket, what the lab's hub runs
// over ssh where a box will not forward a socket. It relays both ways, holds little when one side does
// not read, and says plainly when no daemon answers.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CLI_ENV, CLI_PATH } from '../testing/compiled-cli.js';
import { daemonWhoami, listenAsFakeEngine } from '../testing/fake-engine.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-relay-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const relay = (socket: string) => spawn(process.execPath, [CLI_PATH, 'relay', '--stdio', '--socket', socket], { env: { ...process.env, ...CLI_ENV }, stdio: ['pipe', 'pipe', 'pipe'] });

test("relays a request to the daemon's socket and its answer back, and exits when stdin ends", async (t) => {
  const engine = await listenAsFakeEngine(join(dir, 'engine.sock'), daemonWhoami('alice', 1000));
  t.after(() => engine.close());
  const child = relay(engine.path);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stdin.write(JSON.stringify({ kind: 'request', id: 7, method: 'session.whoami', params: {} }) + '\n');
  const status = new Promise<number | null>((resolve) => child.on('close', resolve));
  while (!out.includes('\n')) await new Promise((r) => setTimeout(r, 20));
  child.stdin.end();
  assert.equal(await status, 0);
  assert.deepEqual(JSON.parse(out), { kind: 'response', id: 7, ok: true, result: daemonWhoami('alice', 1000) });
  assert.deepEqual(engine.asked, ['session.whoami']);
});

test('with no daemon there it says so and exits 1', async () => {
  const child = relay(join(dir, 'none.sock'));
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(status, 1);
  assert.equal(err, `gpushare relay: no gpushare daemon answers at ${join(dir, 'none.sock')}: no socket there.\n`);
});

test('holds little when its reader does not read: the daemon side backs up instead of the relay buffering it all', async (t) => {
  const path = join(dir, 'flood.sock');
  const sixtyFourMiB = 64 * 1024 * 1024;
  const daemon: { side: Socket | null } = { side: null };
  const server = createServer((socket) => {
    daemon.side = socket;
    socket.on('error', () => undefined);
    socket.write(Buffer.alloc(sixtyFourMiB, 0x61));
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const child = relay(path);
  t.after(() => {
    child.kill('SIGKILL');
    server.close();
  });
  child.stdout.pause(); // the hub's side reads nothing
  while (daemon.side === null) await new Promise((r) => setTimeout(r, 20));
  // wait until the bytes the relay took stop growing
  let taken = -1;
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const now = daemon.side!.bytesWritten - daemon.side!.writableLength;
    if (now === taken) break;
    taken = now;
  }
  assert.ok(daemon.side!.writableLength > sixtyFourMiB / 2, `most of the 64 MiB waits on the daemon's side (${daemon.side!.writableLength} bytes)`);
  assert.ok(taken < 16 * 1024 * 1024, `the relay and the pipes between took ${taken} bytes`);
});
