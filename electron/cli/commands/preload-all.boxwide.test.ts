// The box-wide route never breaks a program: in a private mount namespace (unshare -m) whose /etc is an
// overlay of the real one (so this machine's /etc is never touched), /etc/ld.so.preload is bind-mounted from
// the file `gpushare daemon install --root STAGE --preload-all` wrote, or from an empty file. Each program
// runs both ways and must give the same stdout, stderr and exit status; the library is seen in the maps of
// a program run with it, so the "with" runs did load it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fakegpuBuildDir, packageRoot } from '../../engine/paths.js';
import { ensurePreloadBuilt, preloadBuildDir } from '../../engine/gate/testing/launch-gate-sim.js';
import { inPreloadNamespace, preloadNamespaceUnavailable } from '../../engine/testing/preload-namespace.js';
import { CLI_ENV, CLI_PATH } from '../testing/compiled-cli.js';
import { installedPreloadLibrary } from './preload-all.js';

const LIB = installedPreloadLibrary(packageRoot());
const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const nobodyReads = (path: string): boolean => spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'test', '-r', path]).status === 0;
const skip =
  preloadNamespaceUnavailable() ??
  (!ensurePreloadBuilt()
    ? 'the preload library is not built (npm run build:native)'
    : !nobodyReads(LIB)
      ? `uid 65534 cannot read ${LIB} (a checkout under a private home): the programs run as nobody would not load it`
      : false);

const work = mkdtempSync(join(tmpdir(), 'gpushare-boxwide-'));
chmodSync(work, 0o755);
after(() => rmSync(work, { recursive: true, force: true }));
let withLib = '';
let withoutLib = '';
let staticHello = '';

interface Ran { status: number | null; stdout: string; stderr: string }
function inNamespace(preloadFile: string, argv: string[], extraEnv: Record<string, string> = {}): Ran {
  const ns = inPreloadNamespace({ preloadFile, work }, argv);
  const r = spawnSync(ns.file, ns.args, {
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', HOME: work, LANG: 'C.UTF-8', ...extraEnv, ...ns.env },
    cwd: work,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => {
  if (skip) return;
  const stage = join(work, 'stage');
  const install = spawnSync(process.execPath, [CLI_PATH, 'daemon', 'install', '--root', stage, '--preload-all'], { env: { ...process.env, ...CLI_ENV }, encoding: 'utf8' });
  assert.equal(install.status, 0, install.stderr);
  withLib = join(stage, 'etc', 'ld.so.preload');
  assert.equal(readFileSync(withLib, 'utf8'), `${LIB}\n`);
  withoutLib = join(work, 'empty-preload');
  writeFileSync(withoutLib, '');
  const src = join(work, 'hello.c');
  writeFileSync(src, '#include <stdio.h>\nint main(int argc, char **argv) { printf("static, %d args\\n", argc); return argc == 2 ? 3 : 0; }\n');
  staticHello = join(work, 'hello-static');
  const cc = spawnSync('gcc', ['-static', '-O2', '-o', staticHello, src], { encoding: 'utf8' });
  if (cc.status !== 0) staticHello = '';
});

const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
const PROGRAMS: [string, () => string[] | string][] = [
  ['bash', () => ['bash', '-c', 'echo $((6 * 7)); type cd; x=$(echo sub); echo "$x"; exit 5']],
  ['coreutils', () => ['sh', '-c', 'printf "b\\na\\n" | sort; echo hello | sha256sum; date -u -d @0; id -un; env -i /usr/bin/printenv; ls /nonexistent; echo $?']],
  ['python3', () => ['python3', '-c', 'import ctypes, json, ssl, subprocess; print(json.dumps({"ok": True})); print(subprocess.run(["true"]).returncode)']],
  ['node', () => ['node', '-e', 'const c = require("child_process"); console.log(c.execFileSync("echo", ["child"]).toString().trim(), typeof require("crypto").randomUUID())']],
  ['ssh -V', () => (has('ssh') ? ['ssh', '-V'] : 'ssh is missing (Debian package openssh-client)')],
  ['ssh -G', () => (has('ssh') ? ['ssh', '-G', '-F', '/dev/null', 'gpu-box.example'] : 'ssh is missing (Debian package openssh-client)')],
  ['sudo -n true (as root)', () => (has('sudo') ? ['sudo', '-n', 'true'] : 'sudo is missing (Debian package sudo)')],
  ['sudo -n -u nobody id', () => (has('sudo') ? ['sudo', '-n', '-u', 'nobody', 'id', '-un'] : 'sudo is missing (Debian package sudo)')],
  ['su -s /bin/true nobody', () => ['su', '-s', '/bin/true', 'nobody']],
  ['su -s /bin/sh -c "id -un" nobody', () => ['su', '-s', '/bin/sh', '-c', 'id -un', 'nobody']],
  ['systemctl --version', () => (has('systemctl') ? ['systemctl', '--version'] : 'systemctl is missing (Debian package systemd)')],
  ['setuid passwd -S run by nobody (secure mode)', () => [...NOBODY, '/usr/bin/passwd', '-S', 'nobody']],
  ['setuid newgrp refused to nobody', () => [...NOBODY, '/usr/bin/newgrp', 'root']],
  ['a statically linked program', () => (staticHello ? [staticHello, 'arg'] : 'gcc -static failed (libc6-dev has libc.a)')],
  ['a program that calls dlsym 800,000 times (RTLD_NEXT, RTLD_DEFAULT, handles, dlvsym)', () => [join(preloadBuildDir(), 'dlsym_heavy')]],
];

describe('every program runs the same with the library in /etc/ld.so.preload', { skip }, () => {
  test('the "with" runs load the library (it is in their maps), the "without" runs do not', () => {
    const LOADED = ['sh', '-c', 'grep -q libgpushare-preload.so /proc/self/maps && echo loaded || echo not loaded'];
    assert.equal(inNamespace(withLib, LOADED).stdout, 'loaded\n');
    assert.equal(inNamespace(withoutLib, LOADED).stdout, 'not loaded\n');
    assert.equal(inNamespace(withLib, [...NOBODY, ...LOADED]).stdout, 'loaded\n', 'as nobody too');
  });

  for (const [name, argv] of PROGRAMS) {
    test(`${name}: same stdout, stderr and exit status`, (t) => {
      const args = argv();
      if (typeof args === 'string') return t.skip(args);
      const without = inNamespace(withoutLib, args);
      const withIt = inNamespace(withLib, args);
      assert.ok(without.stdout !== '' || without.stderr !== '' || without.status === 0, `the program ran: ${JSON.stringify(without)}`);
      assert.deepEqual(withIt, without);
    });
  }

  test('a setuid program takes no gpushare setting from its caller\'s environment (secure mode)', () => {
    // the same program twice, run by nobody who asks for the library's debug lines: plain, then setuid root
    const plain = join(work, 'cucall-plain');
    const setuid = join(work, 'cucall-setuid');
    for (const copy of [plain, setuid]) spawnSync('cp', [join(preloadBuildDir(), 'preload_inert'), copy]);
    chmodSync(plain, 0o755);
    chmodSync(setuid, 0o4755);
    const env = { GPUSHARE_PRELOAD_DEBUG: '1' };
    const libcuda = join(fakegpuBuildDir(), 'libcuda.so.1'); // no state: its calls fail, the same way both times
    const asNobody = inNamespace(withLib, [...NOBODY, plain, 'cucall', libcuda], env);
    const asRoot = inNamespace(withLib, [...NOBODY, setuid, 'cucall', libcuda], env);
    assert.match(asNobody.stdout, /^cuMemAlloc_v2 \d+\n$/);
    assert.match(asNobody.stderr, /gpushare-preload\[\d+\]: dlsym\(cuMemAlloc_v2\) -> hook/, 'the plain program reads GPUSHARE_PRELOAD_DEBUG');
    assert.deepEqual(asRoot, { status: 0, stdout: asNobody.stdout, stderr: '' }, 'the setuid one does not');
  });

  test('this machine\'s /etc was not touched', () => {
    assert.equal(spawnSync('test', ['-e', '/etc/ld.so.preload']).status === 0 ? readFileSync('/etc/ld.so.preload', 'utf8').includes('libgpushare') : false, false);
  });
});
