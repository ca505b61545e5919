// Starting a managed job: from an argv array (never a shell), as the submitting user,
// with its GPU and the preload library in the environment and its output in a log file.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, chownSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { ApiError } from '../api/api-error.js';

/** The executable argv[0] names, resolved like a shell would (PATH, or a path with a slash). */
export function resolveCommand(command: string, options: { path: string | undefined; cwd: string }): string {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(options.cwd, command)]
    : (options.path ?? '').split(delimiter).filter(Boolean).map((dir) => join(isAbsolute(dir) ? dir : resolve(options.cwd, dir), command));
  let notExecutable: string | null = null;
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
    } catch {
      continue; // not here: try the next directory
    }
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      notExecutable ??= candidate; // a shell would go on searching PATH too
    }
  }
  if (notExecutable) throw new ApiError('invalid-request', `${notExecutable} is not executable (chmod +x it, or run it through its interpreter). Nothing was started.`);
  throw new ApiError('invalid-request', `command not found: ${command}${command.includes('/') ? '' : ' (searched PATH)'}. Nothing was started.`);
}

export function checkDirectory(cwd: string): void {
  let ok = false;
  try {
    ok = statSync(cwd).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw new ApiError('invalid-request', `Working directory ${cwd} does not exist. Nothing was started.`);
}

export interface Account {
  uid: number;
  gid: number;
  name: string;
  home: string | null;
}

/** uid → account from /etc/passwd (gid for spawn, name for messages). */
export function lookupAccount(uid: number, passwdPath = '/etc/passwd'): Account {
  try {
    for (const line of readFileSync(passwdPath, 'utf8').split('\n')) {
      const [name, , u, g, , home] = line.split(':');
      if (u !== undefined && Number(u) === uid && name) return { uid, gid: Number(g), name, home: home || null };
    }
  } catch {
    // a minimal container without passwd
  }
  return { uid, gid: uid, name: String(uid), home: null };
}

/** Environment entries "NAME=value" as an object (the last of a name wins). */
export function envFromEntries(entries: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

export interface LaunchSpec {
  /** argv[0] already resolved to the executable. */
  executable: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  logPath: string;
  /** Set when the engine runs as root and starts a job for another user. */
  runAs: Account | null;
}

/** Spawn the job in its own process group (so it can be signalled as a whole and outlives a Ctrl-C of the engine). */
export function launch(spec: LaunchSpec): ChildProcess {
  const logDir = join(spec.logPath, '..');
  mkdirSync(logDir, { recursive: true, mode: 0o700 });
  const fd = openSync(spec.logPath, 'a', 0o600);
  try {
    if (spec.runAs) chownSync(spec.logPath, spec.runAs.uid, spec.runAs.gid);
    return spawn(spec.executable, spec.argv.slice(1), {
      argv0: spec.argv[0],
      cwd: spec.cwd,
      env: spec.env,
      shell: false,
      detached: true,
      stdio: ['ignore', fd, fd],
      ...(spec.runAs ? { uid: spec.runAs.uid, gid: spec.runAs.gid } : {}),
    });
  } finally {
    closeSync(fd); // the child has its own copy
  }
}
