// `gpushare enrol`: run one command enrolled with given options (for wrappers that cannot use `gpushare
// run`), or print / install the line that loads the preload library into a user's shell sessions. The
// options reach the engine from this process itself (enrol.register, keyed by the kernel's pid for it),
// never through an environment the command could rewrite.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PRIORITIES, parseByteSize, type Priority } from '../../../shared/jobs.js';
import { preloadLibraryPath } from '../../engine/gate/launch-gate.js';
import { ENROL_SHELLS, RC_FILES, SHELL_LINE_MARK, shellLine, type EnrolShell } from '../../engine/enrol/shell-line.js';
import { UsageError } from '../args.js';
import { callWithin, EngineRequestError, EngineUnavailableError, findEngine } from '../engine-client.js';
import { splitEnrolArgs } from '../run-args.js';

export async function enrolCommand(argv: string[]): Promise<number> {
  const { flags, command } = splitEnrolArgs(argv);
  const shell = flags.get('shell');
  if (shell !== undefined) {
    if (command.length > 0 || flags.has('priority') || flags.has('mem') || flags.has('keep-resident')) throw new UsageError('--shell takes no command and no job options: it prints the line for your sessions.');
    if (typeof shell !== 'string' || !(ENROL_SHELLS as readonly string[]).includes(shell)) throw new UsageError(`--shell must be one of ${ENROL_SHELLS.join(', ')}, got "${String(shell)}".`);
    return shellCommand(shell as EnrolShell, flags.has('install'));
  }
  if (flags.has('install')) throw new UsageError('--install goes with --shell bash|zsh.');
  if (command.length === 0) throw new UsageError('Which command? Give it after --, e.g. gpushare enrol --priority best-effort -- python train.py');
  const priorityText = flags.get('priority');
  if (priorityText !== undefined && !(PRIORITIES as readonly string[]).includes(String(priorityText))) throw new UsageError(`--priority must be one of ${PRIORITIES.join(', ')}; got "${String(priorityText)}".`);
  let memoryQuotaBytes: number | undefined;
  const mem = flags.get('mem');
  if (mem !== undefined) {
    try {
      memoryQuotaBytes = parseByteSize(String(mem));
    } catch (error) {
      throw new UsageError(`--mem: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const options = { ...(priorityText ? { priority: priorityText as Priority } : {}), ...(memoryQuotaBytes !== undefined ? { memoryQuotaBytes } : {}), ...(flags.has('keep-resident') ? { keepResident: true } : {}) };
  const registered = await register(options);
  if (registered !== true) process.stderr.write(`gpushare enrol: ${registered}: ${command[0]} runs unmanaged.\n`);
  return runEnrolled(command);
}

async function register(options: Parameters<typeof callWithin<'enrol.register'>>[2]): Promise<true | string> {
  let found;
  try {
    found = await findEngine();
  } catch (error) {
    if (error instanceof EngineUnavailableError) return `no gpushare engine answers (tried ${error.tried.join('; ')})`;
    throw error;
  }
  try {
    await callWithin(found.client, 'enrol.register', options);
    return true;
  } catch (error) {
    if (error instanceof EngineRequestError) return `the engine refused: ${error.message}`;
    throw error;
  } finally {
    found.client.close();
  }
}

/** COMMAND in the foreground with the library loaded; its exit status (128 + signal when killed). */
function runEnrolled(command: string[]): Promise<number> {
  const library = preloadLibraryPath();
  const env: NodeJS.ProcessEnv = { ...process.env, LD_PRELOAD: process.env.LD_PRELOAD ? `${library}:${process.env.LD_PRELOAD}` : library };
  delete env.GPUSHARE_JOB_ID; // a managed job's mark: the command is enrolled, not one of that job's processes
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { env, stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT'];
    const handlers = signals.map((s) => [s, forward(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    child.once('error', (error) => {
      process.stderr.write(`gpushare enrol: cannot run ${command[0]}: ${error.message}\n`);
      resolve(127);
    });
    child.once('close', (code, signal) => {
      for (const [s, h] of handlers) process.off(s, h);
      resolve(signal ? 128 + (signalNumber(signal) ?? 1) : (code ?? 1));
    });
  });
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15, SIGABRT: 6 };
  return numbers[signal];
}

function shellCommand(shell: EnrolShell, install: boolean): number {
  const line = shellLine(shell, preloadLibraryPath());
  if (!install) {
    process.stdout.write(`${line}\n`);
    return 0;
  }
  const dir = shell === 'zsh' && process.env.ZDOTDIR ? process.env.ZDOTDIR : process.env.HOME || homedir();
  const rc = join(dir, RC_FILES[shell]);
  const text = existsSync(rc) ? readFileSync(rc, 'utf8') : '';
  if (text.split('\n').some((l) => l.includes(SHELL_LINE_MARK))) {
    process.stdout.write(`${rc} already loads gpushare's library (a line marked "${SHELL_LINE_MARK}"): nothing changed.\n`);
    return 0;
  }
  appendFileSync(rc, `${text && !text.endsWith('\n') ? '\n' : ''}${line}\n`);
  process.stdout.write(`Added to ${rc}:\n  ${line}\nNew ${shell} sessions load it; in this one: source ${rc}\n`);
  return 0;
}
