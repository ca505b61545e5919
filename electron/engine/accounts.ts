// Accounts as the system knows them: names for uids, gids for group names.
import { readFileSync } from 'node:fs';

function entries(path: string): string[][] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter((line) => line && !line.startsWith('#')).map((line) => line.split(':'));
  } catch {
    return []; // a minimal container without the file
  }
}

/** A group's gid by name, or null where the system has no such group. */
export function groupId(name: string, groupPath = '/etc/group'): number | null {
  const found = entries(groupPath).find((fields) => fields[0] === name);
  return found && found[2] !== undefined && /^\d+$/.test(found[2]) ? Number(found[2]) : null;
}

/** Group names for gids (a gid the system does not name stays its number). */
export function groupNames(gids: readonly number[], groupPath = '/etc/group'): string[] {
  const byGid = new Map(entries(groupPath).map((fields) => [Number(fields[2]), fields[0]] as const));
  return gids.map((gid) => byGid.get(gid) ?? String(gid));
}
