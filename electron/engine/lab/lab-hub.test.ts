// The hub on stand-in boxes (unix sockets on this machine, no root): each box on its own — a frozen,
// silent, dead or babbling box is only that box's state, reached again with backoff, never a delay for the rest.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BoxConnection, LabSnapshot } from '../../../shared/lab.js';
import { LabHub } from './lab-hub.js';
import { FakeBox } from './testing/fake-box.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-hub-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const specs = (...names: string[]) => names.map((name) => ({ name, route: { kind: 'socket' as const, path: join(dir, `${name}.sock`) } }));
const boxOf = (lab: LabSnapshot, name: string) => lab.boxes.find((b) => b.name === name)!;

async function until(hub: LabHub, what: string, check: (lab: LabSnapshot) => boolean, ms = 20_000): Promise<LabSnapshot> {
  const deadline = Date.now() + ms;
  for (;;) {
    const lab = hub.snapshot();
    if (check(lab)) return lab;
    if (Date.now() > deadline) throw new Error(`waited for ${what}: ${JSON.stringify(lab.boxes.map((b) => [b.name, b.connection, b.snapshot?.seq]))}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a frozen box (it accepts, never answers) delays no other box, and is down once its try times out', async (t) => {
  const [a, b, frozen] = ['a', 'b', 'frozen'].map((n) => new FakeBox(join(dir, `${n}.sock`)));
  frozen!.frozen = true;
  for (const box of [a, b, frozen]) await box!.start();
  const hub = new LabHub(specs('a', 'b', 'frozen'), { socketDir: join(dir, 's1'), timeoutMs: 4000, firstRetryMs: 100 });
  t.after(async () => {
    hub.close();
    for (const box of [a, b, frozen]) await box!.stop();
  });
  hub.start();
  const early = await until(hub, 'a and b with snapshots', (l) => ['a', 'b'].every((n) => boxOf(l, n).connection.state === 'connected' && (boxOf(l, n).snapshot?.seq ?? 0) > 2));
  assert.equal(boxOf(early, 'frozen').connection.state, 'connecting', 'a and b update while the frozen box is still being tried');
  const down = await until(hub, 'frozen down', (l) => boxOf(l, 'frozen').connection.state === 'down');
  assert.equal((boxOf(down, 'frozen').connection as { lastError: string }).lastError, 'frozen: no answer within 4 s');
});

test('a box that goes silent is taken as down; one that comes back is connected again, the hub running on', async (t) => {
  const box = new FakeBox(join(dir, 'quiet.sock'));
  await box.start();
  const hub = new LabHub(specs('quiet'), { socketDir: join(dir, 's2'), silentMs: 500, firstRetryMs: 100, maxRetryMs: 200, timeoutMs: 1000 });
  t.after(async () => {
    hub.close();
    await box.stop();
  });
  hub.start();
  await until(hub, 'connected', (l) => l.boxes[0]!.connection.state === 'connected' && l.boxes[0]!.snapshot !== null);
  box.frozen = true;
  const silent = await until(hub, 'down for silence', (l) => l.boxes[0]!.connection.state === 'down');
  assert.match((silent.boxes[0]!.connection as { lastError: string }).lastError, /^quiet: sent nothing for 0\.5 s/);
  box.frozen = false;
  const back = await until(hub, 'back', (l) => l.boxes[0]!.connection.state === 'connected' && (l.boxes[0]!.snapshot?.seq ?? 0) > (silent.boxes[0]!.snapshot?.seq ?? 0));
  assert.equal(back.boxes[0]!.caller?.user, 'alice');
});

test('a dead box is retried with backoff, down since its first failure; its last snapshot is kept, marked by its state', async (t) => {
  const box = new FakeBox(join(dir, 'dies.sock'));
  await box.start();
  const hub = new LabHub(specs('dies'), { socketDir: join(dir, 's3'), firstRetryMs: 50, maxRetryMs: 200 });
  const states: BoxConnection[] = [];
  hub.onUpdate((l) => {
    const c = l.boxes[0]!.connection;
    if (states.at(-1) !== c) states.push(c);
  });
  t.after(async () => {
    hub.close();
    await box.stop();
  });
  hub.start();
  await until(hub, 'connected', (l) => (l.boxes[0]!.snapshot?.seq ?? 0) > 1);
  await box.stop();
  const down = await until(hub, 'three failed tries', (l) => l.boxes[0]!.connection.state === 'down' && (l.boxes[0]!.connection as { attempt: number }).attempt >= 3);
  const failures = states.filter((s): s is Extract<BoxConnection, { state: 'down' }> => s.state === 'down');
  assert.equal(new Set(failures.map((f) => f.since)).size, 1, 'down since the first failure, through every retry');
  assert.deepEqual(failures.slice(0, 4).map((f) => f.attempt), [0, 1, 2, 3]);
  const waits = failures.slice(1).map((f) => f.nextTryAt);
  assert.ok(waits.every((w, i) => i === 0 || w! > waits[i - 1]!));
  assert.ok(states.some((s) => s.state === 'reconnecting'), 'each try shows as reconnecting');
  assert.match((down.boxes[0]!.connection as { lastError: string }).lastError, /^dies: .*dies\.sock: no socket there/);
  assert.notEqual(down.boxes[0]!.snapshot, null, 'the last snapshot is kept while the box is down');
});

test('a box that sends something that is not the protocol is dropped and said so', async (t) => {
  const box = new FakeBox(join(dir, 'babble.sock'));
  await box.start();
  const hub = new LabHub(specs('babble'), { socketDir: join(dir, 's4'), firstRetryMs: 5000 });
  t.after(async () => {
    hub.close();
    await box.stop();
  });
  hub.start();
  await until(hub, 'connected', (l) => l.boxes[0]!.connection.state === 'connected');
  box.garbage = 'hello, I am not JSON';
  const down = await until(hub, 'down', (l) => l.boxes[0]!.connection.state === 'down');
  assert.equal((down.boxes[0]!.connection as { lastError: string }).lastError, 'babble: sent a line that is not JSON ("hello, I am not JSON")');
});

test('the ssh a hub started ends with the hub, even when the hub is killed', async (t) => {
  // a stand-in ssh that records its pid and waits, as `ssh -N -L …` does
  const pidFile = join(dir, 'ssh.pid');
  const fakeSsh = join(dir, 'fake-ssh');
  writeFileSync(fakeSsh, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 1000\n`, { mode: 0o755 });
  const hubModule = join(fileURLToPath(new URL('.', import.meta.url)), 'lab-hub.js');
  const script = `import(${JSON.stringify(hubModule)}).then(({ LabHub }) => new LabHub([{ name: 'far', route: { kind: 'ssh', destination: 'far', socket: '/run/gpushare/engine.sock', gpushare: 'gpushare' } }], { socketDir: ${JSON.stringify(join(dir, 's5'))}, ssh: ${JSON.stringify(fakeSsh)}, timeoutMs: 600000 }).start())`;
  const hub = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  t.after(() => hub.kill('SIGKILL'));
  for (let i = 0; i < 200 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
  const sshPid = Number(readFileSync(pidFile, 'utf8'));
  assert.ok(existsSync(`/proc/${sshPid}`), 'the stand-in ssh runs');
  hub.kill('SIGKILL');
  let gone = false;
  for (let i = 0; i < 200 && !gone; i++) {
    await new Promise((r) => setTimeout(r, 50));
    gone = !existsSync(`/proc/${sshPid}`) || /^State:\s+Z/m.test(readFileSync(`/proc/${sshPid}/status`, 'utf8'));
  }
  assert.ok(gone, 'the ssh ended with its hub');
});

test('settled waits for who you are and the jobs on a box, not only its first snapshot (lab ps --json showed a box connected with caller null)', async (t) => {
  const slow = new FakeBox(join(dir, 'slow.sock'), 'alice');
  slow.delays = { 'session.whoami': 400, 'jobs.list': 400 }; // snapshots tick every 50 ms meanwhile
  await slow.start();
  const hub = new LabHub(specs('slow'), { socketDir: join(dir, 's-slow') });
  t.after(async () => {
    hub.close();
    await slow.stop();
  });
  hub.start();
  await hub.settled(10_000);
  const box = boxOf(hub.snapshot(), 'slow');
  assert.equal(box.connection.state, 'connected');
  assert.deepEqual(box.caller, { user: 'alice', uid: 1000, admin: false }, 'who you are there is known once it settled');
});
