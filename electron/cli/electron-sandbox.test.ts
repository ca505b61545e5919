// The launcher's sandbox check on the machines Chromium meets: each way it cannot sandbox is named
// with its fix, and each way it can lets Electron start.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sandboxFacts, sandboxVerdict, type SandboxFacts } from './electron-sandbox.js';

const HELPER = '/opt/gpushare/chrome-sandbox';
const desktop: SandboxFacts = {
  uid: 1000,
  chromeSandbox: { path: HELPER, uid: 1000, mode: 0o100755 },
  unprivilegedUsernsClone: 1,
  maxUserNamespaces: 15000,
  apparmorRestrictsUserns: null,
  noSandboxAsked: false,
};

test('user namespaces allowed: the sandbox starts without the setuid helper', () => {
  assert.deepEqual(sandboxVerdict(desktop), { kind: 'ok', how: 'user-namespaces' });
  assert.deepEqual(sandboxVerdict({ ...desktop, unprivilegedUsernsClone: null, apparmorRestrictsUserns: 0 }), { kind: 'ok', how: 'user-namespaces' });
});

test('user namespaces off but chrome-sandbox setuid root (mode 4755): the helper sandboxes', () => {
  for (const off of [{ unprivilegedUsernsClone: 0 }, { maxUserNamespaces: 0 }, { apparmorRestrictsUserns: 1 }]) {
    assert.deepEqual(sandboxVerdict({ ...desktop, ...off, chromeSandbox: { path: HELPER, uid: 0, mode: 0o104755 } }), { kind: 'ok', how: 'setuid-helper' });
  }
});

test('each way user namespaces are off is named with its sysctl, beside the chown/chmod of the helper', () => {
  const cases: Array<[Partial<SandboxFacts>, string, string]> = [
    [{ unprivilegedUsernsClone: 0 }, 'kernel.unprivileged_userns_clone = 0', 'sudo sysctl -w kernel.unprivileged_userns_clone=1'],
    [{ maxUserNamespaces: 0 }, 'user.max_user_namespaces = 0', 'sudo sysctl -w user.max_user_namespaces=15000'],
    [{ apparmorRestrictsUserns: 1 }, 'kernel.apparmor_restrict_unprivileged_userns = 1', 'sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0'],
  ];
  for (const [off, why, sysctl] of cases) {
    const verdict = sandboxVerdict({ ...desktop, ...off });
    assert.equal(verdict.kind, 'cannot');
    const problem = (verdict as { problem: string }).problem;
    assert.ok(problem.includes(why), problem);
    assert.ok(problem.includes(sysctl), problem);
    assert.ok(problem.includes(`${HELPER} is not setuid root (owner uid 1000, mode 0755; it must be root's with mode 4755)`), problem);
    assert.ok(problem.includes(`sudo chown root:root ${HELPER} && sudo chmod 4755 ${HELPER}`), problem);
    assert.ok(problem.includes('gpushare start --browser'), problem);
  }
});

test('a helper owned by root without the setuid bit, or group-writable, does not count', () => {
  for (const helper of [{ uid: 0, mode: 0o100755 }, { uid: 0, mode: 0o104775 }, { uid: 1000, mode: 0o104755 }]) {
    const verdict = sandboxVerdict({ ...desktop, unprivilegedUsernsClone: 0, chromeSandbox: { path: HELPER, ...helper } });
    assert.equal(verdict.kind, 'cannot', JSON.stringify(helper));
  }
});

test('a missing helper says so and how to get it back', () => {
  const verdict = sandboxVerdict({ ...desktop, maxUserNamespaces: 0, chromeSandbox: null });
  assert.equal(verdict.kind, 'cannot');
  assert.match((verdict as { problem: string }).problem, /chrome-sandbox is missing from the Electron distribution/);
});

test('root is refused even where namespaces work, with "run as your own user" and what --no-sandbox costs', () => {
  const verdict = sandboxVerdict({ ...desktop, uid: 0 });
  assert.equal(verdict.kind, 'cannot');
  assert.match((verdict as { problem: string }).problem, /cannot run as root.*Run gpushare start as your own user.*--no-sandbox knowing that the console page then runs without Chromium's sandbox, so a flaw in it would have all of root's rights/);
});

test('--no-sandbox asked: Electron runs, with a warning that says what is given up', () => {
  const verdict = sandboxVerdict({ ...desktop, uid: 0, unprivilegedUsernsClone: 0, noSandboxAsked: true });
  assert.deepEqual(verdict, { kind: 'unsandboxed', warning: "gpushare start: --no-sandbox: the console page then runs without Chromium's sandbox, so a flaw in it would have all of your rights on this machine." });
});

test('sandboxFacts reads the helper beside the executable and the three /proc switches', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-sandbox-'));
  try {
    const dist = join(dir, 'dist');
    mkdirSync(dist);
    writeFileSync(join(dist, 'chrome-sandbox'), '');
    chmodSync(join(dist, 'chrome-sandbox'), 0o750);
    const proc = join(dir, 'proc');
    mkdirSync(join(proc, 'sys', 'kernel'), { recursive: true });
    mkdirSync(join(proc, 'sys', 'user'), { recursive: true });
    writeFileSync(join(proc, 'sys', 'kernel', 'unprivileged_userns_clone'), '0\n');
    writeFileSync(join(proc, 'sys', 'user', 'max_user_namespaces'), '63417\n');
    const facts = sandboxFacts(join(dist, 'electron'), ['.', '--no-sandbox'], proc);
    assert.deepEqual(facts.chromeSandbox, { path: join(dist, 'chrome-sandbox'), uid: process.getuid!(), mode: 0o100750 });
    assert.equal(facts.unprivilegedUsernsClone, 0);
    assert.equal(facts.maxUserNamespaces, 63417);
    assert.equal(facts.apparmorRestrictsUserns, null, 'absent on this kernel');
    assert.equal(facts.noSandboxAsked, true);
    assert.equal(sandboxFacts(join(dir, 'nowhere', 'electron'), [], proc).chromeSandbox, null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
