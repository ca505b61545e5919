// The environment of every program the engine runs while it is root (the box daemon): a fixed one,
// never the engine's own or a user's, so nothing a user set (LD_AUDIT, LD_LIBRARY_PATH, PATH, NODE_OPTIONS …)
// reaches a process that still runs as root. A personal engine runs its tools with its user's own environment.

/** PATH for root's programs: system directories only. */
export const ROOT_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

/** All a root program gets from us, before what the caller adds for it. */
export const rootEnvironment = (): Record<string, string> => ({ PATH: ROOT_PATH });

const runningAsRoot = (): boolean => process.getuid?.() === 0 || process.geteuid?.() === 0;

/**
 * The environment for a tool the engine runs (nvidia-smi, the MPS control daemon, sqlite3, fakegpu): as root,
 * the fixed one plus `extra`; otherwise the engine's own (its user's) plus `extra`.
 */
export function toolEnvironment(extra: Record<string, string> = {}, isRoot = runningAsRoot()): NodeJS.ProcessEnv {
  return isRoot ? { ...rootEnvironment(), ...extra } : { ...process.env, ...extra };
}
