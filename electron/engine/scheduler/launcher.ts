// Starting a managed job: from an argv array (never a shell), as the submitting user (uid, gid and the
// system's supplementary groups, through gpushare-spawn), with its environment and its output in a log file.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { accessSync, closeSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { isNamedAccount, type Account } from '../accounts.js';
import { ApiError } from '../api/api-error.js';
import { rootEnvironment } from '../root-env.js';
import { openJobLog } from './job-log.js';
import { describeSpawnFailure, encodeSpawnRequest, spawnHelperPath, spawnHelperProblem, type SpawnContext } from './spawn-as-user.js';
import { permitsExecute, reach, type Identity } from './user-access.js';

/** A user the engine checks for: who they are to the kernel, and their name for messages. */
export interface UserCheck {
  identity: Identity;
  user: string;
}

/**
 * The executable argv[0] names, resolved like a shell would (PATH, or a path with a slash). With `as`,
 * as that user would find it: directories they cannot search are passed over, files they cannot run refused.
 */
export function resolveCommand(command: string, options: { path: string | undefined; cwd: string; as?: UserCheck }): string {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(options.cwd, command)]
    : (options.path ?? '').split(delimiter).filter(Boolean).map((dir) => join(isAbsolute(dir) ? dir : resolve(options.cwd, dir), command));
  let notExecutable: string | null = null;
  let closed: string | null = null;
  for (const candidate of candidates) {
    const found = options.as ? runnableAs(candidate, options.as.identity) : runnable(candidate);
    if (found === 'yes') return candidate;
    if (found === 'not executable') notExecutable ??= candidate; // a shell would go on searching PATH too
    else if (found !== 'missing') closed ??= found;
  }
  const by = options.as ? ` by ${options.as.user}` : '';
  if (notExecutable) throw new ApiError('invalid-request', `${notExecutable} is not executable${by} (chmod +x it, or run it through its interpreter). Nothing was started.`);
  // as another user: found or not, behind a directory closed to them is said alike (what lies there is not theirs to learn)
  if (options.as) throw new ApiError('invalid-request', `${options.as.user} cannot use ${command}: it is not found${command.includes('/') ? '' : ' on PATH'}, or a directory on the way is closed to them. Nothing was started.`);
  throw new ApiError('invalid-request', `command not found: ${command}${command.includes('/') ? '' : ' (searched PATH)'}. Nothing was started.`);
}

/** As the engine itself would run it. */
function runnable(candidate: string): 'yes' | 'missing' | 'not executable' {
  try {
    if (!statSync(candidate).isFile()) return 'missing';
  } catch {
    return 'missing'; // not here: try the next directory
  }
  try {
    accessSync(candidate, constants.X_OK);
    return 'yes';
  } catch {
    return 'not executable';
  }
}

/** As `who` would run it; a string: the directory on the way that shuts them out. */
function runnableAs(candidate: string, who: Identity): 'yes' | 'missing' | 'not executable' | string {
  const found = reach(candidate, who);
  if (!found.ok) return found.problem === 'closed' ? found.at : 'missing';
  if (!found.stats.isFile()) return 'missing';
  return permitsExecute(found.stats, who) ? 'yes' : 'not executable';
}

/** Refuse a working directory that is missing, or (with `as`) one that user cannot enter, naming what is in the way. */
export function checkDirectory(cwd: string, as?: UserCheck): void {
  if (!as) {
    let ok = false;
    try {
      ok = statSync(cwd).isDirectory();
    } catch {
      ok = false;
    }
    if (!ok) throw new ApiError('invalid-request', `Working directory ${cwd} does not exist. Nothing was started.`);
    return;
  }
  const found = reach(cwd, as.identity);
  // missing, not a directory, closed, or behind a closed directory are said alike: through a link, the walk
  // looks as root, and what it finds inside another user's home is not theirs to learn
  if (!found.ok || !found.stats.isDirectory() || !permitsExecute(found.stats, as.identity)) {
    throw new ApiError('invalid-request', `${as.user} (uid ${as.identity.uid}) cannot use the working directory ${cwd}: it does not exist, is not a directory, or it or a directory on the way is closed to them. Nothing was started.`);
  }
}

export interface LaunchSpec {
  /** argv[0] already resolved to the executable. */
  executable: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  logPath: string;
  /** Set when the engine runs as root: whom the job runs as (its log is theirs); null: as the engine. */
  runAs: Account | null;
}

/** What to spawn: the job itself, or gpushare-spawn that becomes it (the job on its fd 3). */
export interface SpawnPlan {
  file: string;
  args: string[];
  argv0: string;
  cwd: string;
  env: Record<string, string>;
  /** For gpushare-spawn: the request it reads on fd 3, and what its failure sentence names. */
  helper?: { request: Buffer; context: SpawnContext };
}

/**
 * How to start a job. Another user's job goes through gpushare-spawn, which the engine runs as root with a fixed
 * clean environment: it drops to their uid, gid and the system's supplementary groups for their account, then enters
 * the working directory and execs the job in place as them (the pid is the job's own). Nothing of the job's own
 * environment, directory or program is touched before the drop. Node's own uid/gid options would drop every
 * supplementary group (libuv calls setgroups(0, NULL)) and apply the environment while still root.
 */
export function planSpawn(spec: Omit<LaunchSpec, 'logPath'>, context: { engineUid: number; helper: string }): SpawnPlan {
  const { executable, argv, cwd, env, runAs } = spec;
  if (!runAs || runAs.uid === context.engineUid) return { file: executable, args: argv.slice(1), argv0: argv[0], cwd, env };
  const groupsOf = isNamedAccount(runAs) ? runAs.name : null; // initgroups needs a name: an unnamed uid gets its gid alone
  const request = encodeSpawnRequest({ uid: runAs.uid, gid: runAs.gid, groupsOf, cwd, executable, argv, env });
  return { file: context.helper, args: [], argv0: 'gpushare-spawn', cwd: '/', env: rootEnvironment(), helper: { request, context: { user: runAs.name, uid: runAs.uid, cwd, executable } } };
}

/** The most of gpushare-spawn's status the engine reads (its report is one short line). */
const STATUS_MAX = 4096;

/**
 * Spawn the job in its own process group (so it can be signalled as a whole and outlives a Ctrl-C of the engine).
 * Through gpushare-spawn, a start that fails as the user (a directory they cannot enter now, a program they cannot
 * run) is an 'error' with its sentence, emitted before the child's 'close'.
 */
export function launch(spec: LaunchSpec): ChildProcess {
  const engineUid = process.getuid?.() ?? -1;
  const throughHelper = spec.runAs !== null && spec.runAs.uid !== engineUid;
  if (throughHelper) {
    const problem = spawnHelperProblem(spec.runAs!.name);
    if (problem) throw new Error(problem);
  }
  const plan = planSpawn(spec, { engineUid, helper: spawnHelperPath() });
  const fd = openJobLog(spec.logPath, spec.runAs);
  try {
    if (!plan.helper) return spawn(plan.file, plan.args, { argv0: plan.argv0, cwd: plan.cwd, env: plan.env, shell: false, detached: true, stdio: ['ignore', fd, fd] });
    const child = spawn(plan.file, plan.args, { argv0: plan.argv0, cwd: plan.cwd, env: plan.env, shell: false, detached: true, stdio: ['ignore', fd, fd, 'pipe', 'pipe'] });
    const [request, status] = [child.stdio[3] as Socket | null, child.stdio[4] as Socket | null];
    if (request && status) {
      const { context } = plan.helper;
      const chunks: Buffer[] = [];
      let kept = 0;
      status.on('data', (chunk: Buffer) => {
        if (kept < STATUS_MAX) chunks.push(chunk.subarray(0, STATUS_MAX - kept)); // the helper writes one short line; more is not its
        kept += chunk.length;
      });
      status.on('end', () => {
        const failure = describeSpawnFailure(Buffer.concat(chunks), context);
        if (failure && child.listenerCount('error') > 0) child.emit('error', new Error(failure)); // none: a stopped engine let go of the job
      });
      status.on('error', () => undefined); // the helper is gone: its exit says so
      request.on('error', () => undefined); // it stopped reading: it reports why on the status pipe
      request.end(plan.helper.request);
      request.unref();
      status.unref();
    }
    return child;
  } finally {
    closeSync(fd); // the child has its own copy
  }
}
