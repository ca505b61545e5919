// A managed job's environment before launch: its submitter's, or a login-like one for a client
// that sends none. gpushare's own variables are never taken from it: the engine sets them at launch.
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { Account } from '../accounts.js';

/** Set by the engine for every job (actuators.ts); a caller's value would mislead the preload library or the driver. */
export const ENGINE_ONLY_ENV = /^(LD_PRELOAD|GPUSHARE_.*|CUDA_VISIBLE_DEVICES|CUDA_DEVICE_ORDER|CUDA_MPS_.*)$/;

/** PATH of a fresh login (login.defs' ENV_PATH for users). */
export const LOGIN_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Environment entries "NAME=value" as an object (the last of a name wins). */
export function envFromEntries(entries: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** What a login gives `account`: HOME, USER, LOGNAME, SHELL, PATH, the engine's LANG when it has one, and its runtime directory where it has one. */
export function loginEnvironment(account: Account, lang: string | undefined, runtimeDir: string | null = null): Record<string, string> {
  return {
    HOME: account.home ?? '/',
    USER: account.name,
    LOGNAME: account.name,
    SHELL: account.shell ?? '/bin/sh',
    PATH: LOGIN_PATH,
    ...(lang ? { LANG: lang } : {}),
    ...(runtimeDir ? { XDG_RUNTIME_DIR: runtimeDir } : {}),
  };
}

export interface JobEnvSource {
  /** What the client sent (the CLI sends its own); absent for the browser console and the desktop. */
  sent: readonly string[] | undefined;
  /** `sent` goes on top of this box's login environment for the user (a job sent from another box, as ssh would start it). */
  loginEnv?: boolean;
  /** Whom the job runs as. */
  account: Account;
  /** The engine's own environment: the job's default only where it is the user's own (a personal engine). */
  engineEnv: Readonly<Record<string, string | undefined>>;
  /** The engine runs as the job's user in their session (personal); false for the box daemon, whose environment is nobody's. */
  engineIsTheUsers: boolean;
  /** The user's runtime directory on this box (userRuntimeDir), for a login-like environment; null or absent: none. */
  runtimeDir?: string | null;
}

/** The job's environment as submitted: the engine's own variables removed, to be set at launch. */
export function jobEnvironment(source: JobEnvSource): Record<string, string> {
  const env = source.loginEnv
    ? { ...loginEnvironment(source.account, source.engineEnv.LANG, source.runtimeDir), ...envFromEntries(source.sent ?? []) }
    : source.sent
    ? envFromEntries(source.sent)
    : source.engineIsTheUsers
      ? definedOnly(source.engineEnv)
      : loginEnvironment(source.account, source.engineEnv.LANG, source.runtimeDir);
  for (const name of Object.keys(env)) if (ENGINE_ONLY_ENV.test(name)) delete env[name];
  return env;
}

function definedOnly(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Where pam_systemd makes each user's runtime directory at login. */
export const USER_RUNTIME_ROOT = '/run/user';

/**
 * The user's runtime directory as an ssh login has it (XDG_RUNTIME_DIR), or null: `root`/UID only where it is a
 * directory itself (lstat: a symlink there is never followed), owned by `uid`, mode 0700. Looked at, never made.
 */
export function userRuntimeDir(uid: number, root = USER_RUNTIME_ROOT): string | null {
  if (!Number.isSafeInteger(uid) || uid < 0) return null;
  const path = join(root, String(uid));
  try {
    const st = lstatSync(path);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o7777) === 0o700 ? path : null;
  } catch {
    return null; // none: the user has no session here (and no lingering)
  }
}
