// Starting a managed job: from an argv array (never a shell), as the submitting user (uid, gid and the
// system's supplementary groups, through setpriv), with its environment and its output in a log file.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { isNamedAccount, type Account } from '../accounts.js';
import { ApiError } from '../api/api-error.js';
import { openJobLog } from './job-log.js';
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

/** What to spawn: the job itself, or setpriv that becomes it. */
export interface SpawnPlan {
  file: string;
  args: string[];
  argv0: string;
  cwd: string;
  env: Record<string, string>;
}

const SETPRIV_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

/** util-linux's setpriv, on PATH or where distributions put it; null when the box has none. */
export function findSetpriv(path = process.env.PATH ?? ''): string | null {
  for (const dir of [...path.split(delimiter).filter(isAbsolute), ...SETPRIV_DIRS]) {
    if (runnable(join(dir, 'setpriv')) === 'yes') return join(dir, 'setpriv');
  }
  return null;
}

/** Why the engine cannot start another user's job: the tool it needs is missing. */
export const setprivMissing = (user: string): string =>
  `setpriv (util-linux) is not installed on this box, and the engine needs it to run ${user}'s job as ${user} with their groups. Install util-linux. Nothing was started.`;

/**
 * How to start a job. Another user's job goes through setpriv: their uid and gid, the system's supplementary
 * groups for their account (initgroups), then it execs the job in place, so the pid is the job's own. Node's
 * own uid/gid options would drop every supplementary group (libuv calls setgroups(0, NULL)).
 */
export function planSpawn(spec: Omit<LaunchSpec, 'logPath'>, context: { engineUid: number; setpriv: string | null }): SpawnPlan {
  const { executable, argv, cwd, env, runAs } = spec;
  if (!runAs || runAs.uid === context.engineUid) return { file: executable, args: argv.slice(1), argv0: argv[0], cwd, env };
  if (!context.setpriv) throw new Error(setprivMissing(runAs.name));
  const groups = isNamedAccount(runAs) ? '--init-groups' : '--clear-groups'; // initgroups needs a name: an unnamed uid gets its gid alone
  return { file: context.setpriv, args: [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, groups, '--', executable, ...argv.slice(1)], argv0: context.setpriv, cwd, env };
}

/** Spawn the job in its own process group (so it can be signalled as a whole and outlives a Ctrl-C of the engine). */
export function launch(spec: LaunchSpec): ChildProcess {
  const plan = planSpawn(spec, { engineUid: process.getuid?.() ?? -1, setpriv: spec.runAs ? findSetpriv() : null });
  const fd = openJobLog(spec.logPath, spec.runAs);
  try {
    return spawn(plan.file, plan.args, { argv0: plan.argv0, cwd: plan.cwd, env: plan.env, shell: false, detached: true, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd); // the child has its own copy
  }
}
