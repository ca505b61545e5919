// Accounts as the system knows them: names for uids, gids for group names.
import { readFileSync } from 'node:fs';

/** The lines of a colon-separated account file (/etc/passwd, /etc/group), split into fields. */
export function accountEntries(path: string): string[][] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter((line) => line && !line.startsWith('#')).map((line) => line.split(':'));
  } catch {
    return []; // a minimal container without the file
  }
}

/** A group's gid by name, or null where the system has no such group. */
export function groupId(name: string, groupPath = '/etc/group'): number | null {
  const found = accountEntries(groupPath).find((fields) => fields[0] === name);
  return found && found[2] !== undefined && /^\d+$/.test(found[2]) ? Number(found[2]) : null;
}

/** Group names for gids (a gid the system does not name stays its number). */
export function groupNames(gids: readonly number[], groupPath = '/etc/group'): string[] {
  const byGid = new Map(accountEntries(groupPath).map((fields) => [Number(fields[2]), fields[0]] as const));
  return gids.map((gid) => byGid.get(gid) ?? String(gid));
}

export interface Account {
  uid: number;
  gid: number;
  name: string;
  home: string | null;
  /** Login shell (absent in accounts kept by earlier engines). */
  shell?: string | null;
}

/** uid → account from /etc/passwd (name for messages, home and shell for a job's defaults). */
export function lookupAccount(uid: number, passwdPath = '/etc/passwd'): Account {
  for (const [name, , u, g, , home, shell] of accountEntries(passwdPath)) {
    if (u !== undefined && Number(u) === uid && name) return { uid, gid: Number(g), name, home: home || null, shell: shell || null };
  }
  return { uid, gid: uid, name: String(uid), home: null, shell: null }; // unknown here (a minimal container without passwd)
}

/** Whether the system knows the account by name (lookupAccount's stand-in for an unknown uid is its number). */
export const isNamedAccount = (account: Account): boolean => account.name !== String(account.uid);
