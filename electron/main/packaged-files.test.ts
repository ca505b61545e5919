// The package as a lab installs it: every file the app opens at run time is in this checkout, taken
// into the package by electron-builder.yml's files, unpacked from the asar when another process or
// dlopen needs it, and found there by outsideAsar; the deb's command and systemd unit say what runs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { outsideAsar, packageRoot } from '../engine/paths.js';
import { DESKTOP_EXECUTABLE, PACKAGED_APP, packagedUnit, runtimeFiles } from './packaged-files.js';

// js-yaml comes with electron-builder, which reads the same file with it
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };
const root = packageRoot();

interface BuilderConfig {
  files: string[];
  asarUnpack: string[];
  linux: { executableName: string; icon: string; target: string[]; desktop: { entry: Record<string, string> } };
  deb: { fpm: string[] };
}
const config = yaml.load(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as BuilderConfig;

/** electron-builder's globs (minimatch): ** any depth, * within a name, a leading ! excludes. */
function globRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      out += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

function selected(path: string, globs: readonly string[]): boolean {
  let taken = false;
  for (const glob of globs) {
    if (glob.startsWith('!')) {
      if (globRegExp(glob.slice(1)).test(path)) taken = false;
    } else if (globRegExp(glob).test(path)) taken = true;
  }
  return taken;
}

test('the glob reading follows electron-builder\'s: ** spans folders, * does not, ! excludes', () => {
  assert.ok(selected('dist/electron/main/index.js', ['dist/electron/**/*']));
  assert.ok(!selected('dist/electron/main/index.test.js', ['dist/electron/**/*', '!**/*.test.js']));
  assert.ok(selected('native/fakegpu/build/libcuda.so.1', ['native/fakegpu/build/libcuda.so*']));
  assert.ok(!selected('native/fakegpu/build/obj/x.o', ['native/fakegpu/build/*']));
  assert.ok(!selected('dist/renderer/index.html', ['dist/electron/**/*']));
});

test('every file the app opens at run time exists here and is packaged; native ones unpacked and found outside the asar', () => {
  const missing: string[] = [];
  for (const file of runtimeFiles()) {
    try {
      statSync(join(root, file.path));
    } catch {
      missing.push(`${file.path} (opened by ${file.by}) is not in this checkout: build it first`);
    }
    if (!selected(file.path, config.files)) missing.push(`${file.path} (opened by ${file.by}) is not among electron-builder.yml's files`);
    if (file.unpacked !== selected(file.path, config.asarUnpack)) {
      missing.push(`${file.path} is ${file.unpacked ? 'not ' : ''}unpacked by electron-builder.yml's asarUnpack, but ${file.by} ${file.unpacked ? 'needs a real file' : 'reads it from the asar'}`);
    }
    if (file.unpacked) {
      assert.equal(outsideAsar(`${PACKAGED_APP}/${file.path}`), `${PACKAGED_APP}.unpacked/${file.path}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('outsideAsar moves only a path inside app.asar, and leaves a checkout alone', () => {
  assert.equal(outsideAsar('/opt/gpushare/resources/app.asar/native'), '/opt/gpushare/resources/app.asar.unpacked/native');
  assert.equal(outsideAsar('/opt/gpushare/resources/app.asar'), '/opt/gpushare/resources/app.asar.unpacked');
  assert.equal(outsideAsar('/home/ann/gpushare/native'), '/home/ann/gpushare/native');
  assert.equal(outsideAsar('/home/ann/app.asarx/native'), '/home/ann/app.asarx/native');
  assert.equal(outsideAsar('/opt/gpushare/resources/app.asar.unpacked/native'), '/opt/gpushare/resources/app.asar.unpacked/native');
});

test('the deb: gpushare on PATH runs the CLI on the packaged Electron as Node; the .desktop entry names its window class', () => {
  assert.equal(`/opt/gpushare/${config.linux.executableName}`, DESKTOP_EXECUTABLE);
  const [source, target] = config.deb.fpm.find((line) => line.endsWith('=/usr/bin/gpushare'))!.split('=');
  const script = readFileSync(join(root, source), 'utf8');
  assert.ok(script.includes(`ELECTRON_RUN_AS_NODE=1 exec ${DESKTOP_EXECUTABLE} ${PACKAGED_APP}/electron/cli/gpushare.js "$@"`), script);
  assert.equal(statSync(join(root, source)).mode & 0o111, 0o111, `${source} is executable`);
  assert.equal(target, '/usr/bin/gpushare');
  assert.equal(config.linux.desktop.entry.StartupWMClass, 'gpushare');
  assert.equal(config.linux.desktop.entry.Exec, 'gpushare start');
  assert.match(readFileSync(join(root, 'assets', 'gpushare.desktop'), 'utf8'), /^StartupWMClass=gpushare$/m);
  for (const size of [16, 32, 48, 256, 512]) statSync(join(root, config.linux.icon, `${size}x${size}.png`));
  assert.deepEqual(config.linux.target, ['deb', 'AppImage']);
});

test('the deb\'s systemd unit is the daemon\'s template, filled for the packaged Electron (regenerate it when the template changes)', () => {
  const [source, target] = config.deb.fpm.find((line) => line.includes('systemd'))!.split('=');
  assert.equal(target, '/usr/lib/systemd/system/gpushare.service');
  const expected = packagedUnit(readFileSync(join(root, 'assets', 'systemd', 'gpushare.service'), 'utf8'));
  const regenerate = `regenerate it: node --input-type=module -e "import {readFileSync,writeFileSync} from 'node:fs'; import {packagedUnit} from './dist/electron/main/packaged-files.js'; writeFileSync('${source}', packagedUnit(readFileSync('assets/systemd/gpushare.service','utf8')))"`;
  assert.equal(readFileSync(join(root, source), 'utf8'), expected, `${source} is out of date; ${regenerate}`);
  assert.match(expected, /^ExecStart=\/opt\/gpushare\/gpushare-desktop \/opt\/gpushare\/resources\/app\.asar\/electron\/cli\/gpushare\.js daemon$/m);
  assert.match(expected, /^Environment=ELECTRON_RUN_AS_NODE=1$/m);
});

test('the NVML addon is built for both runtimes that load it: Node-API 9 at most (Node 20 has 9, Electron 45\'s Node 22 has 10), no external buffers (Electron\'s V8 memory cage refuses them)', () => {
  const gyp = readFileSync(join(root, 'native', 'nvml', 'binding.gyp'), 'utf8');
  const napi = Number(/"NAPI_VERSION=(\d+)"/.exec(gyp)?.[1]);
  assert.ok(napi >= 1 && napi <= 9, `NAPI_VERSION=${napi}`);
  assert.ok(napi <= Number(process.versions.napi), `this Node (${process.version}) offers Node-API ${process.versions.napi}`);
  assert.match(gyp, /"NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED"/);
  const electronVersion = (JSON.parse(readFileSync(join(root, 'node_modules', 'electron', 'package.json'), 'utf8')) as { version: string }).version;
  assert.equal(Number(electronVersion.split('.')[0]), 45, 'the Electron this check was written for; look again at its Node-API level when it changes');
});

test('the libraries left out of the package (bundled into dist/renderer by vite) are imported by nothing the package runs outside the renderer', () => {
  const excluded = config.files.map((glob) => /^!node_modules\/\{([^}]+)\}\/\*\*$/.exec(glob)?.[1]).find(Boolean)?.split(',') ?? [];
  assert.ok(excluded.includes('react'), 'the exclusion this test reads');
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|cts|mts|js)$/.test(entry.name)) {
        const source = readFileSync(join(root, path), 'utf8');
        for (const name of excluded) if (new RegExp(`from ['"]${name}(/[^'"]*)?['"]`).test(source)) offenders.push(`${path} imports ${name}`);
      }
    }
  };
  for (const dir of ['electron', 'shared']) walk(dir);
  assert.deepEqual(offenders, []);
});
