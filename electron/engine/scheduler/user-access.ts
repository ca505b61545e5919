// What a user may reach, decided from mode bits as the kernel would for that uid, gid and
// groups: the engine runs as root for other users' jobs, and root's access() says yes to everything.
import { realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, parse, resolve, sep } from 'node:path';

/** Whom a job runs as: the permissions it gets. */
export interface Identity {
  uid: number;
  gid: number;
  /** Supplementary groups. */
  groups: readonly number[];
}

export type StatPath = (path: string) => Pick<Stats, 'mode' | 'uid' | 'gid' | 'isDirectory' | 'isFile'>;

/** Why a path is out of a user's reach: it is missing, a directory on the way refuses them, or the engine could not look. */
export type Reach = { ok: true; stats: ReturnType<StatPath> } | { ok: false; problem: 'missing' | 'closed' | 'unchecked'; at: string; detail?: string };

const EXECUTE = 0o1;

/** Whether `who` has the execute/search bit on a file: owner's bits, else group's, else other's (ACLs are not read). */
export function permitsExecute(stats: Pick<Stats, 'mode' | 'uid' | 'gid' | 'isDirectory'>, who: Identity): boolean {
  if (who.uid === 0) return stats.isDirectory() || (stats.mode & 0o111) !== 0; // root searches any directory, runs anything with an x bit
  const shift = stats.uid === who.uid ? 6 : stats.gid === who.gid || who.groups.includes(stats.gid) ? 3 : 0;
  return ((stats.mode >> shift) & EXECUTE) !== 0;
}

/** "/a/b/c" → ["/", "/a", "/a/b", "/a/b/c"]. */
function prefixes(path: string): string[] {
  const root = parse(path).root;
  const parts = path.slice(root.length).split(sep).filter(Boolean);
  return [root, ...parts.map((_, i) => root + parts.slice(0, i + 1).join(sep))];
}

/**
 * Walk to `path` as `who`: every directory on the way must let them search it. Stops at the first
 * refusal, so nothing below a closed directory is looked at (its existence is not told). A symlink on
 * the way counts through both its own path and where it leads.
 */
export function reach(path: string, who: Identity, stat: StatPath = statSync, realpath: (p: string) => string = realpathSync): Reach {
  const absolute = resolve(path);
  const walk = (target: string): Reach => {
    const steps = prefixes(target);
    let stats: ReturnType<StatPath> | null = null;
    for (const [i, step] of steps.entries()) {
      try {
        stats = stat(step);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, problem: 'missing', at: step };
        return { ok: false, problem: 'unchecked', at: step, detail: code ?? String(error) };
      }
      const last = i === steps.length - 1;
      if (!last && !stats.isDirectory()) return { ok: false, problem: 'missing', at: step };
      if (!last && !permitsExecute(stats, who)) return { ok: false, problem: 'closed', at: step };
    }
    return { ok: true, stats: stats! };
  };
  const lexical = walk(absolute);
  if (!lexical.ok && lexical.problem !== 'missing') return lexical;
  const existing = lexical.ok ? absolute : dirname(lexical.at); // a missing path is told only if its user could look there
  let real: string;
  try {
    real = realpath(existing);
  } catch {
    return lexical; // it changed under us: what the walk saw stands
  }
  if (real === existing) return lexical;
  const through = walk(real);
  if (!through.ok) return through;
  return lexical.ok ? through : lexical;
}
