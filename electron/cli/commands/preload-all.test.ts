// The box-wide route: `gpushare daemon install --preload-all` names the installation's preload library in
// /etc/ld.so.preload (here under --root: this machine's /etc is never touched), `--no-preload-all` takes it
// out; idempotent, the file's other entries kept byte for byte, a library that would not load refused first.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { packageRoot } from '../../engine/paths.js';
import { CLI_ENV, CLI_PATH } from '../testing/compiled-cli.js';
import { installDaemon, InstallError } from './daemon-install.js';
import { checkLibraryLoadsCleanly, installedPreloadLibrary, planPreloadAll, PRELOAD_OFF_FILE, PreloadAllError } from './preload-all.js';

const home = mkdtempSync(join(tmpdir(), 'gpushare-preload-all-'));
after(() => rmSync(home, { recursive: true, force: true }));
const LIB = installedPreloadLibrary(packageRoot());
const preloadOf = (root: string): string => join(root, 'etc', 'ld.so.preload');
const unitOf = (root: string): string => join(root, 'etc', 'systemd', 'system', 'gpushare.service');

function gpushare(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args], { env: { ...process.env, ...CLI_ENV }, cwd: home }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const preloadLines = (stdout: string): string[] => stdout.split('\n').filter((l) => l.includes('ld.so.preload'));

describe('planPreloadAll: only gpushare\'s entries change', () => {
  const lib = '/opt/gpushare/native/preload/build/libgpushare-preload.so';
  test('added to no file, to a file with a line and no final newline, kept when there', () => {
    assert.deepEqual(planPreloadAll(null, lib, true), { text: `${lib}\n`, change: 'added', others: [], found: [] });
    assert.equal(planPreloadAll('/usr/lib/libother.so', lib, true).text, `/usr/lib/libother.so\n${lib}\n`);
    const current = `/usr/lib/libother.so\n${lib}\n`;
    assert.deepEqual(planPreloadAll(current, lib, true), { text: current, change: 'kept', others: [], found: [lib] });
  });
  test('another installation\'s library is replaced in its place; two of ours become one', () => {
    const old = '/home/lab/gpushare/native/preload/build/libgpushare-preload.so';
    const plan = planPreloadAll(`/a.so\n${old}\n/b.so ${old}:/c.so\n`, lib, true);
    assert.equal(plan.change, 'replaced');
    assert.deepEqual(plan.others, [old]);
    assert.equal(plan.text, `/a.so\n${lib}\n/b.so :/c.so\n`);
  });
  test('taken out: the other entries stay byte for byte; a file of ours alone is removed; absent says so', () => {
    assert.deepEqual(planPreloadAll(`# mine\n/a.so\n${lib}\n\t/b.so\n`, lib, false), { text: '# mine\n/a.so\n\t/b.so\n', change: 'removed', others: [], found: [lib] });
    assert.deepEqual(planPreloadAll(`${lib}\n`, lib, false), { text: null, change: 'removed', others: [], found: [lib] });
    assert.deepEqual(planPreloadAll('/a.so\n', lib, false), { text: '/a.so\n', change: 'absent', others: [], found: [] });
    assert.deepEqual(planPreloadAll(null, lib, false), { text: null, change: 'absent', others: [], found: [] });
  });
});

describe('gpushare daemon install --preload-all / --no-preload-all', () => {
  test('adds the installed library (absolute path), keeps it on a second run, takes it out, each said in one line', async () => {
    const root = mkdtempSync(join(home, 'root-'));
    const add = await gpushare(['daemon', 'install', '--root', root, '--preload-all']);
    assert.equal(add.code, 0, add.stderr);
    assert.deepEqual(preloadLines(add.stdout), [`added ${LIB} to ${preloadOf(root)}: every program started from now on loads it, and enrols at its first CUDA call (to stop all enrolment at once: touch /etc/gpushare/preload-off)`]);
    assert.equal(readFileSync(preloadOf(root), 'utf8'), `${LIB}\n`);
    assert.equal(statSync(preloadOf(root)).mode & 0o777, 0o644);
    assert.ok(existsSync(unitOf(root)), 'the rest of the install happened too');

    const again = await gpushare(['daemon', 'install', '--root', root, '--preload-all']);
    assert.deepEqual(preloadLines(again.stdout), [`kept ${preloadOf(root)}: already loads ${LIB} into every program`]);

    const off = await gpushare(['daemon', 'install', '--root', root, '--no-preload-all']);
    assert.equal(off.code, 0, off.stderr);
    assert.deepEqual(preloadLines(off.stdout), [`removed ${preloadOf(root)} (it held only ${LIB}): programs started from now on do not load the library; running ones keep it until they exit`]);
    assert.equal(existsSync(preloadOf(root)), false);
    const offAgain = await gpushare(['daemon', 'install', '--root', root, '--no-preload-all']);
    assert.deepEqual(preloadLines(offAgain.stdout), [`nothing to take out: ${preloadOf(root)} does not load gpushare's library`]);

    const plain = await gpushare(['daemon', 'install', '--root', root]);
    assert.deepEqual(preloadLines(plain.stdout), [], 'without either option the file is not looked at');
  });

  test('the admin\'s own entries are kept byte for byte, the file replaced whole (no temp file left)', async () => {
    const root = mkdtempSync(join(home, 'others-'));
    mkdirSync(join(root, 'etc'));
    const theirs = '/usr/lib/x86_64-linux-gnu/libmine.so\n# a note\n';
    writeFileSync(preloadOf(root), theirs);
    assert.equal((await gpushare(['daemon', 'install', '--root', root, '--preload-all'])).code, 0);
    assert.equal(readFileSync(preloadOf(root), 'utf8'), `${theirs}${LIB}\n`);
    const off = await gpushare(['daemon', 'install', '--root', root, '--no-preload-all']);
    assert.deepEqual(preloadLines(off.stdout), [`took ${LIB} out of ${preloadOf(root)}: programs started from now on do not load the library; running ones keep it until they exit`]);
    assert.equal(readFileSync(preloadOf(root), 'utf8'), theirs);
    assert.deepEqual(spawnSync('ls', ['-A', join(root, 'etc')], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort(), ['gpushare', 'ld.so.preload', 'systemd']);
  });

  test('both options at once are a usage error, and nothing is written', async () => {
    const root = mkdtempSync(join(home, 'both-'));
    const both = await gpushare(['daemon', 'install', '--root', root, '--preload-all', '--no-preload-all']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--preload-all and --no-preload-all contradict each other/);
    assert.deepEqual(spawnSync('ls', ['-A', root], { encoding: 'utf8' }).stdout, '');
  });

  test('the kill switch named in the output is the one the library checks', () => {
    const enrolC = readFileSync(join(packageRoot(), 'native', 'preload', 'src', 'enrol.c'), 'utf8');
    assert.match(enrolC, new RegExp(`#define GS_PRELOAD_OFF_FILE "${PRELOAD_OFF_FILE}"`));
  });

  test('an installation whose library is missing is refused before anything is written', () => {
    // a package root with everything but the built library
    const fake = mkdtempSync(join(home, 'package-'));
    for (const entry of ['package.json', 'README.md', 'assets', 'electron', 'dist']) symlinkSync(join(packageRoot(), entry), join(fake, entry));
    const root = mkdtempSync(join(home, 'missing-'));
    const said: string[] = [];
    assert.throws(
      () => installDaemon({ root, node: process.execPath, packageRoot: fake, refuseUnsafe: false, createGroup: false, preloadAll: true, say: (l) => said.push(l), warn: () => {} }),
      (e: Error) => e instanceof InstallError && e.message.includes(`${installedPreloadLibrary(fake)} is missing`),
    );
    assert.deepEqual(said, []);
    assert.deepEqual(spawnSync('ls', ['-A', root], { encoding: 'utf8' }).stdout, '');
  });

  test('a library that does not load silently into /bin/true is refused (an unresolved symbol would stop every program)', (t) => {
    const src = join(home, 'broken.c');
    const broken = join(home, 'libgpushare-preload.so');
    writeFileSync(src, 'extern int gs_no_such_symbol;\nint gs_read(void) { return gs_no_such_symbol; }\n');
    const cc = spawnSync('gcc', ['-shared', '-fPIC', '-o', broken, src], { encoding: 'utf8' });
    if (cc.error) return t.skip('gcc is missing: no broken library to build');
    assert.throws(() => checkLibraryLoadsCleanly(broken), (e: Error) => e instanceof PreloadAllError && /does not load cleanly .*exit 127.*undefined symbol/.test(e.message));
  });

  test('the built library loads cleanly; a relative path, or one with a space or a colon, is refused', () => {
    assert.doesNotThrow(() => checkLibraryLoadsCleanly(LIB));
    assert.throws(() => checkLibraryLoadsCleanly('libgpushare-preload.so'), /absolute path/);
    assert.throws(() => checkLibraryLoadsCleanly('/opt/my gpushare/libgpushare-preload.so'), /holds a space or a colon/);
  });
});
