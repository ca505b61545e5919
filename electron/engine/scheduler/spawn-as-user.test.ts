// gpushare-spawn on its own: a request it cannot trust is refused before anything runs, and a good one
// becomes the user (ids, groups, no capabilities) before it enters the directory and runs the program.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, chmodSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT_PATH } from '../root-env.js';
import { encodeSpawnRequest, spawnHelperPath, type SpawnRequest } from './spawn-as-user.js';

const SKIP_ROOT = process.getuid?.() === 0 ? false : 'needs root: the helper changes uid';

interface Outcome {
  code: number | null;
  stdout: string;
  status: string[];
}

/** Run the helper as the daemon does (clean environment, request on fd 3, status on fd 4). */
function runHelper(request: Buffer): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(spawnHelperPath(), [], { cwd: '/', env: { PATH: ROOT_PATH }, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    const status: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.resume();
    (child.stdio[4] as Socket).on('data', (d: Buffer) => status.push(d));
    (child.stdio[3] as Socket).on('error', () => undefined);
    (child.stdio[3] as Socket).end(request);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, status: Buffer.concat(status).toString().split('\0').filter(Boolean) }));
  });
}

const nobody = (overrides: Partial<SpawnRequest> = {}): SpawnRequest => ({ uid: 65534, gid: 65534, groupsOf: null, cwd: '/', executable: '/bin/sh', argv: ['sh', '-c', 'id -u; id -g; id -G; pwd; echo "$MARK"; grep ^CapEff /proc/self/status'], env: { PATH: '/usr/bin:/bin', MARK: 'from the user' }, ...overrides });
const fields = (...parts: string[]) => Buffer.from(parts.map((p) => `${p}\0`).join(''));

test("a good request runs the program as the user: their uid and gid, no other groups, no capabilities, the user's environment, in the directory", { skip: SKIP_ROOT }, async () => {
  const outcome = await runHelper(encodeSpawnRequest(nobody()));
  assert.deepEqual(outcome.status, []);
  assert.equal(outcome.code, 0);
  assert.equal(outcome.stdout, '65534\n65534\n65534\n/\nfrom the user\nCapEff:\t0000000000000000\n');
});

test('a directory the user cannot enter fails at the directory, as the user, and the program never runs', { skip: SKIP_ROOT }, async (t) => {
  const dir = mkdtempSync('/tmp/gpushare-spawn-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o700);
  const marker = join(dir, 'ran');
  const outcome = await runHelper(encodeSpawnRequest(nobody({ cwd: dir, executable: '/usr/bin/touch', argv: ['touch', marker] })));
  assert.deepEqual([outcome.code, outcome.status], [127, ['cwd', 'Permission denied']]);
  assert.equal(existsSync(marker), false);
});

test('a request it cannot trust is refused whole before anything runs: uid 0, a bad magic, fields missing or extra, counts out of range, relative paths, unknown groups', async () => {
  const good = encodeSpawnRequest(nobody());
  const cases: Array<[string, Buffer, string]> = [
    ['uid 0', fields('gpushare-spawn 1', '0', '0', 'clear', '', '/', '/bin/true', '1', 'true', '0'), 'it asks for uid 0: a root job is started by the engine itself'],
    ['another magic', fields('gpushare-spawn 2', '1000', '1000', 'clear', '', '/', '/bin/true', '1', 'true', '0'), 'not a gpushare-spawn 1 request'],
    ['bytes past the end', Buffer.concat([good, Buffer.from('LD_AUDIT=/evil.so\0')]), 'it has bytes past its end'],
    ['cut short', good.subarray(0, good.length - 5), 'a field is not terminated'],
    ['no environment count', fields('gpushare-spawn 1', '1000', '1000', 'clear', '', '/', '/bin/true', '1', 'true'), 'it ends early'],
    ['a negative uid', fields('gpushare-spawn 1', '-1', '1000', 'clear', '', '/', '/bin/true', '1', 'true', '0'), 'a number is out of range'],
    ['a uid with junk', fields('gpushare-spawn 1', '1000x', '1000', 'clear', '', '/', '/bin/true', '1', 'true', '0'), 'a number is out of range'],
    ['an argc past its bound', fields('gpushare-spawn 1', '1000', '1000', 'clear', '', '/', '/bin/true', '99999999', 'true', '0'), 'a number is out of range'],
    ['no argv[0]', fields('gpushare-spawn 1', '1000', '1000', 'clear', '', '/', '/bin/true', '0', '0'), 'no argv[0]'],
    ['an entry without =', fields('gpushare-spawn 1', '1000', '1000', 'clear', '', '/', '/bin/true', '1', 'true', '1', 'LD_AUDIT'), "an environment entry has no '='"],
    ['a relative directory', fields('gpushare-spawn 1', '1000', '1000', 'clear', '', 'home', '/bin/true', '1', 'true', '0'), 'the working directory and the program must be absolute paths'],
    ['a relative program', fields('gpushare-spawn 1', '1000', '1000', 'clear', '', '/', 'true', '1', 'true', '0'), 'the working directory and the program must be absolute paths'],
    ['unknown groups', fields('gpushare-spawn 1', '1000', '1000', 'keep', '', '/', '/bin/true', '1', 'true', '0'), 'groups must be init or clear'],
    ['empty', Buffer.alloc(0), 'it ends early'],
  ];
  for (const [what, request, reason] of cases) {
    const outcome = await runHelper(request);
    assert.deepEqual([outcome.code, outcome.status, outcome.stdout], [127, ['request', reason], ''], what);
  }
});

test('run by hand, without the daemon\'s pipes, it says what it is for and does nothing', async () => {
  const outcome = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(spawnHelperPath(), [], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stderr }));
  });
  assert.deepEqual(outcome, { code: 2, stderr: 'gpushare-spawn: the gpushare daemon runs this to start a job as its user; it is not for use by hand.\n' });
});
