// `gpushare jupyter install-kernel`: where the kernelspec goes (as jupyter_core has it), what it runs, and
// bad input refused with exit 2 and nothing written. The kernels themselves: engine/enrol/jupyter-kernel.sim.test.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { packageRoot } from '../../engine/paths.js';
import { CLI_ENV, CLI_PATH } from '../testing/compiled-cli.js';
import { kernelLauncher, kernelsDir, kernelspec } from './jupyter.js';
import { installedPreloadLibrary } from './preload-all.js';

const home = mkdtempSync(join(tmpdir(), 'gpushare-jupyter-cli-'));
after(() => rmSync(home, { recursive: true, force: true }));

function gpushare(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args], { env: { ...process.env, ...CLI_ENV, ...env }, cwd: home }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test("kernelspecs go where jupyter_core looks: $JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter; the system's and the prefix's", () => {
  assert.equal(kernelsDir('user', { JUPYTER_DATA_DIR: '/d', XDG_DATA_HOME: '/x', HOME: '/h' }), '/d/kernels');
  assert.equal(kernelsDir('user', { XDG_DATA_HOME: '/x', HOME: '/h' }), '/x/jupyter/kernels');
  assert.equal(kernelsDir('user', { HOME: '/h' }), '/h/.local/share/jupyter/kernels');
  assert.equal(kernelsDir('system', {}), '/usr/local/share/jupyter/kernels');
  assert.equal(kernelsDir('sys-prefix', {}, '/usr'), '/usr/share/jupyter/kernels');
});

test('the kernelspec runs the launcher with its options, then python3 -m ipykernel_launcher with the connection file', () => {
  const spec = kernelspec({ name: 'k', priority: 'best-effort', memoryQuotaBytes: 8 * 1024 ** 3, autoPark: true }, { launcher: '/l.py', library: '/lib.so' });
  assert.deepEqual(spec.argv, ['/usr/bin/python3', '/l.py', '--library', '/lib.so', '--priority', 'best-effort', '--mem', String(8 * 1024 ** 3), '--auto-park', '--', '/usr/bin/python3', '-m', 'ipykernel_launcher', '-f', '{connection_file}']);
  assert.equal(spec.display_name, 'Python 3 (gpushare: best-effort, 8G quota, auto-park)');
  assert.equal(kernelspec({ name: 'k', autoPark: false }, { launcher: '/l.py', library: '/lib.so' }).display_name, 'Python 3 (gpushare)');
  assert.throws(() => kernelspec({ name: 'k', autoPark: false }, { launcher: '/l.py', library: '/My Drive/lib.so' }), /holds a space or a colon, which LD_PRELOAD cannot carry/);
});

test('install-kernel --user writes kernel.json in the data directory and says where', async () => {
  const data = join(home, 'data');
  const r = await gpushare(['jupyter', 'install-kernel', '--user', '--name', 'lab-gpu', '--mem', '512M'], { JUPYTER_DATA_DIR: data });
  assert.equal(r.code, 0, r.stderr);
  const file = join(data, 'kernels', 'lab-gpu', 'kernel.json');
  assert.equal(r.stdout, `wrote ${file}: "Python 3 (gpushare: 512M quota)", kernel name lab-gpu; each kernel started from it enrols as one job at its first CUDA call\n`);
  const spec = JSON.parse(readFileSync(file, 'utf8'));
  assert.deepEqual(spec.argv.slice(0, 6), ['/usr/bin/python3', kernelLauncher(packageRoot()), '--library', installedPreloadLibrary(packageRoot()), '--mem', String(512 * 1024 ** 2)]);
});

for (const [args, message] of [
  [['--name', 'my kernel'], /--name must be letters, digits/],
  [['--priority', 'urgent'], /--priority must be one of high, normal, best-effort; got "urgent"/],
  [['--mem', '-1G'], /--mem: "-1G" is not a memory size/],
  [['--user', '--sys-prefix'], /--user and --sys-prefix contradict each other/],
  [['extra'], /takes no arguments, got "extra"/],
] as const) {
  test(`install-kernel ${args.join(' ')}: usage error (exit 2), nothing written`, async () => {
    const data = join(home, `bad-${args[0]}`);
    const r = await gpushare(['jupyter', 'install-kernel', '--user', ...args], { JUPYTER_DATA_DIR: data });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(existsSync(data), false);
  });
}

test('gpushare jupyter without a known subcommand is a usage error naming install-kernel', async () => {
  const r = await gpushare(['jupyter', 'install']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Unknown jupyter command "install"[\s\S]*gpushare jupyter install-kernel/);
});
