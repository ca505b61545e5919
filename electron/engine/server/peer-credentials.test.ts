// The kernel's word on a unix socket's peer (SO_PEERCRED) and the system's groups (getgrouplist).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { peerIdentity, systemGroups } from './peer-credentials.js';

const isRoot = process.getuid?.() === 0;

/**
 * A server on a fresh unix socket (dir 0755, socket 0666: any user may connect) that hands over each
 * accepted socket. Under /tmp, not TMPDIR: TMPDIR may be a private dir that uid 65534 cannot enter.
 */
async function socketServer(t: { after(fn: () => void | Promise<void>): void }): Promise<{ path: string; accepted(): Promise<Socket> }> {
  const dir = mkdtempSync('/tmp/gpushare-peer-');
  chmodSync(dir, 0o755);
  const path = join(dir, 'peer.sock');
  const waiting: ((s: Socket) => void)[] = [];
  const server: Server = createServer((socket) => {
    const take = waiting.shift();
    if (take) take(socket);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  chmodSync(path, 0o666);
  t.after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, accepted: () => new Promise<Socket>((resolve) => waiting.push(resolve)) };
}

/** A child node process that connects to path and stays until stdin closes; resolves with its pid once connected. */
function connectingChild(t: { after(fn: () => void): void }, path: string, prefix: string[] = []) {
  const script = `const s=require('net').connect(${JSON.stringify(path)},()=>process.stdout.write('connected\\n'));process.stdin.on('end',()=>s.end()).resume()`;
  const [cmd, ...args] = [...prefix, process.execPath, '-e', script];
  const child = spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('connected') && resolve(child.pid!));
    child.once('exit', (code) => reject(new Error(`the connecting child exited (${code}): ${err}`)));
  });
}

test('a unix socket server sees a connecting child process by its pid, uid and gid', async (t) => {
  const server = await socketServer(t);
  const accepted = server.accepted();
  const pid = await connectingChild(t, server.path);
  const socket = await accepted;
  assert.deepEqual(peerIdentity(socket), { pid, uid: process.getuid!(), gid: process.getgid!() });
  assert.notEqual(pid, process.pid);
  socket.destroy();
});

test('a client in this process is seen as this process', async (t) => {
  const server = await socketServer(t);
  const accepted = server.accepted();
  const client = connect(server.path);
  const socket = await accepted;
  assert.deepEqual(peerIdentity(socket), { pid: process.pid, uid: process.getuid!(), gid: process.getgid!() });
  client.destroy();
  socket.destroy();
});

test('a client started as uid 65534 is seen as uid 65534, with that child’s pid', async (t) => {
  if (!isRoot) return t.skip('needs root: setpriv to uid 65534');
  const server = await socketServer(t);
  const accepted = server.accepted();
  const pid = await connectingChild(t, server.path, ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups']);
  const socket = await accepted;
  assert.deepEqual(peerIdentity(socket), { pid, uid: 65534, gid: 65534 });
  socket.destroy();
});

test('a destroyed socket is refused with a sentence, not read as someone', async (t) => {
  const server = await socketServer(t);
  const accepted = server.accepted();
  const client = connect(server.path);
  const socket = await accepted;
  socket.destroy();
  assert.throws(() => peerIdentity(socket), /no socket file descriptor/);
  client.destroy();
});

test('a TCP connection is refused: the kernel cannot name its peer', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const client = connect((server.address() as { port: number }).port, '127.0.0.1');
  const socket = await accepted;
  assert.throws(() => peerIdentity(socket), /is not a unix socket/);
  client.destroy();
  socket.destroy();
});

test('systemGroups lists a supplementary group the system gives a user', (t) => {
  if (!isRoot) return t.skip('needs root: creates a user and a group');
  const group = `gpst-h1g${process.pid}`;
  const user = `gpst-h1u${process.pid}`;
  execFileSync('groupadd', ['--system', group]);
  t.after(() => execFileSync('groupdel', [group]));
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', '-G', group, user]);
  t.after(() => execFileSync('userdel', [user]));
  const groupGid = Number(execFileSync('getent', ['group', group]).toString().split(':')[2]);
  const primaryGid = Number(execFileSync('id', ['-g', user]).toString());
  const groups = systemGroups(user, primaryGid);
  assert.ok(groups.includes(groupGid), `${user}'s groups ${groups} include ${group} (${groupGid})`);
  assert.ok(groups.includes(primaryGid), `${user}'s groups ${groups} include its primary group ${primaryGid}`);
});

test('systemGroups for root contains 0', () => {
  assert.ok(systemGroups('root', 0).includes(0));
});

test('systemGroups refuses an empty user name', () => {
  assert.throws(() => systemGroups('', 0), /user must be a non-empty user name/);
});
