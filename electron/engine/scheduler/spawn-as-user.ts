// Another user's job, started by the root engine through gpushare-spawn (native/spawn): the helper runs
// with a fixed clean environment and gets the job on a pipe, drops groups, gid and uid, and only then, as
// the user, enters the working directory and execs the program with the user's environment.
import { lstatSync, realpathSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';
import { nativeDir } from '../paths.js';

/** The helper as built by `npm run build:native`. */
export const spawnHelperPath = (): string => join(nativeDir(), 'spawn', 'build', 'gpushare-spawn');

/** What the helper needs to become the user and start their job. */
export interface SpawnRequest {
  uid: number;
  gid: number;
  /** The account's name: its system groups are looked up (initgroups); null: no name, no supplementary groups. */
  groupsOf: string | null;
  cwd: string;
  executable: string;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
}

const MAGIC = 'gpushare-spawn 1';

/** NUL-terminated fields in the order native/spawn/src/gpushare_spawn.c reads them. */
export function encodeSpawnRequest(request: SpawnRequest): Buffer {
  const env = Object.entries(request.env).map(([name, value]) => `${name}=${value}`);
  const fields = [MAGIC, String(request.uid), String(request.gid), request.groupsOf === null ? 'clear' : 'init', request.groupsOf ?? '', request.cwd, request.executable, String(request.argv.length), ...request.argv, String(env.length), ...env];
  const bad = fields.find((f) => f.includes('\0'));
  if (bad !== undefined) throw new Error(`A job's argument, environment entry or path contains a NUL byte, which no program can be given (${JSON.stringify(bad.slice(0, 80))}). Nothing was started.`);
  if (!Number.isInteger(request.uid) || request.uid <= 0 || !Number.isInteger(request.gid) || request.gid < 0) throw new Error(`Not a user to start a job as: uid ${request.uid}, gid ${request.gid}.`);
  return Buffer.from(fields.map((f) => `${f}\0`).join(''), 'utf8');
}

/** Whose job and what it ran, for the sentence a failed start gets. */
export interface SpawnContext {
  user: string;
  uid: number;
  cwd: string;
  executable: string;
}

/** The helper's report of a start that did not happen (its status pipe: "<stage>\0<reason>\0"), as a sentence; null: it started. */
export function describeSpawnFailure(status: Buffer, context: SpawnContext): string | null {
  if (status.length === 0) return null;
  const [stage, reason = 'no reason given'] = status.toString('utf8').split('\0');
  const who = `${context.user} (uid ${context.uid})`;
  switch (stage) {
    case 'cwd':
      return `${who} cannot enter the working directory ${context.cwd} at launch: ${reason}. Nothing was started.`;
    case 'exec':
      return `${who} cannot run ${context.executable} at launch: ${reason}. Nothing was started.`;
    case 'groups':
    case 'gid':
    case 'uid':
    case 'verify':
      return `The engine could not become ${who} to start the job (${stage}: ${reason}). Nothing was started.`;
    default:
      return `gpushare-spawn refused to start the job (${stage}: ${reason}). Nothing was started.`;
  }
}

/** Why the engine may not run `path` as root, or null: it and every directory above it are changeable by root alone. */
export function rootOnlyProblem(path: string): string | null {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return `${path} is missing (build it with \`npm run build:native\`)`;
  }
  for (const target of new Set([path, real])) {
    for (let at = target; ; at = dirname(at)) {
      let stats;
      try {
        stats = lstatSync(at);
      } catch (error) {
        return `${at} cannot be checked (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
      }
      const sticky = stats.isDirectory() && (stats.mode & 0o1000) !== 0; // like /tmp: nobody else renames root's entries there
      if (stats.uid !== 0) return `${at} belongs to uid ${stats.uid}, not root`;
      if ((stats.mode & 0o022) !== 0 && !sticky && !stats.isSymbolicLink()) return `${at} can be written by ${[(stats.mode & 0o020) !== 0 ? 'its group' : '', (stats.mode & 0o002) !== 0 ? 'others' : ''].filter(Boolean).join(' and ')}`;
      if (at === parse(at).root) break;
    }
  }
  return null;
}

/** Why the engine cannot start `user`'s job as them now, or null. */
export function spawnHelperProblem(user: string): string | null {
  const problem = rootOnlyProblem(spawnHelperPath());
  return problem ? `The engine cannot start ${user}'s job as ${user}: its exec helper gpushare-spawn is not safe to run as root (${problem}). Nothing was started.` : null;
}
