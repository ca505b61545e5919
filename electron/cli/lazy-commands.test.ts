// A command line loads only what it runs: --version nothing but the dispatcher, --help the command
// table and its usage text, a command its own module; ps asking a running engine loads no driver.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { cliRig, type CliRig } from './testing/cli-rig.js';
import { CLI_PATH, COMPILED_TREE } from './testing/compiled-cli.js';

/** The compiled modules `gpushare ARGS…` loads, relative to the tree (electron/cli/main.js, …). */
function modulesLoaded(rig: CliRig, args: string[]): Promise<{ modules: string[]; code: number; stderr: string }> {
  const trace = join(rig.home, `trace-${args.join('-').replace(/\W/g, '_')}`);
  rmSync(trace, { force: true });
  const hook = pathToFileURL(join(COMPILED_TREE, 'electron', 'cli', 'testing', 'module-trace.js')).href;
  const env = { ...rig.env, GPUSHARE_MODULE_TRACE: trace, GPUSHARE_MODULE_TREE: pathToFileURL(COMPILED_TREE).href + '/' };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', hook, CLI_PATH, ...args], { env }, (error, _stdout, stderr) => {
      const modules = existsSync(trace) ? [...new Set(readFileSync(trace, 'utf8').split('\n').filter(Boolean))] : [];
      resolve({ modules, code: error ? Number(error.code ?? 1) : 0, stderr });
    });
  });
}

const commandModules = (modules: string[]): string[] => modules.filter((m) => m.startsWith('electron/cli/commands/'));

test('--version loads the dispatcher alone; --help and help CMD the table and its usage text, no command', async () => {
  const rig = cliRig('lazy-help');
  try {
    const version = await modulesLoaded(rig, ['--version']);
    assert.equal(version.code, 0, version.stderr);
    assert.ok(version.modules.includes('electron/cli/main.js'), `the trace saw the dispatcher: ${version.modules.join(', ')}`);
    assert.ok(!version.modules.includes('electron/cli/command-table.js'), `--version loads no table: ${version.modules.join(', ')}`);
    for (const args of [['--help'], ['help', 'ps'], ['mig', 'plan', '--help']]) {
      const { modules, code, stderr } = await modulesLoaded(rig, args);
      assert.equal(code, 0, stderr);
      assert.ok(modules.includes('electron/cli/usage.js'), `gpushare ${args.join(' ')} read the usage text`);
      assert.deepEqual(commandModules(modules), [], `gpushare ${args.join(' ')} loads no command`);
      assert.deepEqual(modules.filter((m) => m.startsWith('electron/engine/') && !/\/(paths|accounts|daemon-paths|simulated-box-names|profiles)\.js$/.test(m)), [], 'nor the engine beyond a few names');
    }
  } finally {
    rig.dispose();
  }
});

test('a command loads its own module; ps asking a running engine loads neither the driver nor the sampler', async () => {
  const rig = cliRig('lazy-ps');
  try {
    const jobs = await modulesLoaded(rig, ['jobs', '--json']); // no engine: it fails, having loaded jobs alone
    assert.deepEqual(commandModules(jobs.modules), ['electron/cli/commands/jobs.js']);
    await rig.serve();
    const ps = await modulesLoaded(rig, ['ps', '--json']);
    assert.equal(ps.code, 0, ps.stderr);
    assert.ok(ps.modules.includes('electron/cli/commands/ps.js'));
    for (const heavy of ['electron/engine/gpu/open-backend.js', 'electron/engine/gpu/nvml-addon.js', 'electron/engine/sampler/sampler.js']) {
      assert.ok(!ps.modules.includes(heavy), `ps against an engine loads no ${heavy}`);
    }
  } finally {
    rig.dispose();
  }
});
