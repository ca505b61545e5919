// The command line's conventions, checked on the compiled `gpushare` as a user runs it: --help and -h
// on every command and subcommand of the dispatcher's table, --version, completion, exit statuses.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { packageRoot } from '../engine/paths.js';
import { COMMANDS } from './command-table.js';
import { main } from './main.js';
import { cliRig } from './testing/cli-rig.js';

const rig = cliRig('conventions');
after(() => rig.dispose());

/** Every `gpushare CMD` and `gpushare CMD SUB`, from the table the dispatcher runs. */
const everyCommand: string[][] = COMMANDS.flatMap((c) => [[c.name], ...Object.keys(c.subcommands ?? {}).map((sub) => [c.name, sub])]);

/** main() in this process, its output captured: one spawn per command would take a minute on two cores. */
async function inProcess(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  process.stdout.write = ((chunk: string) => ((out.stdout += chunk), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => ((out.stderr += chunk), true)) as typeof process.stderr.write;
  try {
    return { code: await main(argv), ...out };
  } finally {
    Object.assign(process.stdout, { write: writes.stdout });
    Object.assign(process.stderr, { write: writes.stderr });
  }
}

test('--help and -h on every command and subcommand print its usage line and exit 0', async () => {
  assert.ok(everyCommand.length > COMMANDS.length, 'the table names subcommands too');
  for (const words of everyCommand) for (const flag of ['--help', '-h']) {
    const { code, stdout, stderr } = await inProcess([...words, flag]);
    const what = `gpushare ${words.join(' ')} ${flag}`;
    assert.equal(code, 0, `${what} exited ${code}: ${stderr}`);
    assert.match(stdout, new RegExp(`^Usage: gpushare ${words[0]}\\b`), what);
    if (words.length === 2 && COMMANDS.find((c) => c.name === words[0])!.subcommands![words[1]] !== COMMANDS.find((c) => c.name === words[0])!.usage) {
      assert.match(stdout, new RegExp(`^Usage: gpushare ${words.join(' ')}\\b`), `${what} prints the subcommand's own usage`);
    }
    assert.equal(stderr, '', what);
  }
  const spawned = await rig.gpushare(['set', '--help']); // and the installed command says the same
  assert.equal(spawned.code, 0);
  assert.match(spawned.stdout, /^Usage: gpushare set JOB/);
});

test('--help after a job argument or a flag value is still gpushare\'s; after run\'s command it is the command\'s', async () => {
  const set = await rig.gpushare(['set', 'j3', '--priority', 'high', '--help']);
  assert.equal(set.code, 0);
  assert.match(set.stdout, /^Usage: gpushare set JOB/);
  // run's command gets its own --help: gpushare tries to submit it (and says no engine runs)
  for (const args of [['run', '--', 'python', '--help'], ['run', '--gpu', '0', 'python', '-h']]) {
    const run = await rig.gpushare(args);
    assert.equal(run.code, 1, args.join(' '));
    assert.match(run.stderr, /No gpushare engine is running/, args.join(' '));
  }
  const sim = await rig.gpushare(['sim', 'fakejob', '--scenario', 'nope', '--', '--help']);
  assert.doesNotMatch(sim.stdout, /^Usage:/);
});

test('gpushare --help lists every command and the exit statuses; help CMD SUB prints that usage', async () => {
  const help = await rig.gpushare(['--help']);
  assert.equal(help.code, 0);
  for (const c of COMMANDS) assert.match(help.stdout, new RegExp(`\\n  ${c.name} +\\S`), c.name);
  assert.match(help.stdout, /Exit status: 0 done, 1 it failed .*, 2 usage error/);
  assert.match(help.stdout, /20G means 20 GiB/);
  const mig = await rig.gpushare(['mig', 'help']);
  assert.equal(mig.code, 0);
  assert.match(mig.stdout, /^Usage: gpushare mig plan /);
  const sub = await rig.gpushare(['help', 'mig', 'apply']);
  assert.equal(sub.code, 0);
  assert.match(sub.stdout, /^Usage: gpushare mig apply /);
});

test('gpushare --version prints the version in package.json', async () => {
  const { version } = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string };
  const run = await rig.gpushare(['--version']);
  assert.equal(run.code, 0);
  assert.equal(run.stdout, `gpushare ${version}\n`);
});

test('usage errors exit 2 naming the problem; a failure exits 1', async () => {
  const cases: Array<[string[], number, RegExp]> = [
    [[], 2, /^gpushare: Which command\?/],
    [['frobnicate'], 2, /Unknown command "frobnicate"/],
    [['ps', '--bogus'], 2, /^gpushare ps: Unknown option '--bogus'; --help lists the options\.\n$/],
    [['set', 'j1', '--mem', '-1G'], 2, /^gpushare set: --mem: "-1G" is not a memory size: it must be positive, like 20G \(GiB\)/],
    [['set', 'j1', '--wait', '-5'], 2, /^gpushare set: --wait must be a number of seconds, got "-5"/],
    [['run', '--mem', '-1G', '--', 'true'], 2, /^gpushare run: --mem: "-1G" is not a memory size: it must be positive/],
    [['ps', '--rate', '-2'], 2, /^gpushare ps: --rate: Sampling rate must be between/],
    [['mig', 'plan', '--model', 'A100-40GB', '--jobs', '10G', '--gpu', '-1'], 2, /--gpu must be a GPU index \(0, 1, …\), got "-1"/],
    [['report', '--since', '-3d'], 2, /--since must be a duration/],
    [['completion', 'fish'], 2, /Which shell\? bash or zsh, got "fish"/],
    [['jobs'], 1, /No gpushare engine is running/],
    [['status'], 1, /No gpushare engine|no socket there/],
  ];
  for (const [args, code, message] of cases) {
    const run = await rig.gpushare(args);
    assert.equal(run.code, code, `gpushare ${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr + run.stdout, message, `gpushare ${args.join(' ')}`);
    assert.doesNotMatch(run.stderr, /ambiguous/, `gpushare ${args.join(' ')}`);
  }
});

test('bash completion: sourcing the script registers gpushare, and it offers commands, subcommands and options', async () => {
  const script = await rig.gpushare(['completion', 'bash']);
  assert.equal(script.code, 0);
  const path = join(rig.home, 'completion.bash');
  writeFileSync(path, script.stdout);
  const complete = (words: string[]): string =>
    execFileSync('bash', ['-c', `source "$1"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _gpushare; echo "\${COMPREPLY[*]}"`, 'bash', path], { encoding: 'utf8' }).trim();
  const registered = execFileSync('bash', ['-c', 'source "$1" && complete -p gpushare', 'bash', path], { encoding: 'utf8' });
  assert.match(registered, /complete .*-F _gpushare gpushare/);
  assert.deepEqual(complete(['gpushare', 'mi']).split(' '), ['mig']);
  assert.deepEqual(complete(['gpushare', 'mig', '']).split(' ').filter((w) => !w.startsWith('-')), ['plan', 'layout', 'apply']);
  assert.deepEqual(complete(['gpushare', 'mig', 'plan', '--j']).split(' '), ['--jobs', '--json']);
  assert.ok(complete(['gpushare', 'set', 'j3', '--']).split(' ').includes('--terminate'));
  assert.ok(complete(['gpushare', '--']).split(' ').includes('--version'));
});

test('zsh completion: the script loads under compinit, registers _gpushare, and offers commands, subcommands and options', async (t) => {
  if (spawnSync('zsh', ['-c', 'true']).error) return t.skip('zsh is not installed here');
  const script = await rig.gpushare(['completion', 'zsh']);
  assert.equal(script.code, 0);
  const path = join(rig.home, 'completion.zsh');
  writeFileSync(path, script.stdout);
  const out = execFileSync('zsh', ['-f', '-c', `autoload -U compinit && compinit -u -D && source "$1" && print -r -- $_comps[gpushare]`, 'zsh', path], { encoding: 'utf8' });
  assert.equal(out.trim(), '_gpushare');
  // what it offers: compadd and _files stubbed to print, words and CURRENT as the completion system sets them
  const offered = (words: string[]): string[] =>
    execFileSync('zsh', ['-f', '-c', `compdef() { :; }; _files() { print -r -- FILES; }; compadd() { [[ $1 == -a ]] && print -r -- \${(P)2}; }; source "$1"; shift; words=("$@"); CURRENT=$#words; _gpushare`, 'zsh', path, ...words], { encoding: 'utf8' })
      .trim().split(/\s+/);
  assert.ok(offered(['gpushare', '']).includes('mig') && offered(['gpushare', '']).includes('--version'));
  assert.deepEqual(offered(['gpushare', 'mig', '']).filter((w) => !w.startsWith('-')), ['plan', 'layout', 'apply', 'FILES']);
  assert.ok(offered(['gpushare', 'mig', 'plan', '--']).includes('--jobs'));
  assert.ok(offered(['gpushare', 'set', 'j3', '--']).includes('--terminate'));
});
