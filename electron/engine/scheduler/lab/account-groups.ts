// The groups an account belongs to, by name, as the lab policy's group entries name them. One
// function for the policy: the system's answer (getgrouplist through the native addon, as at
// login, so NSS groups count), else /etc/group read directly (primary group and membership lists).
import { accountEntries, groupNames, lookupAccount } from '../../accounts.js';
import { systemGroups } from '../../server/peer-credentials.js';

export type GroupsOf = (user: string, uid: number) => string[];

/** Group files are read again at most this often: the scheduler asks on every tick. */
const REREAD_MS = 60_000;

/** Group names of `user` from the files alone: the primary group (its passwd gid), then every group listing it. */
export function readGroupsOf(user: string, uid: number, files: { passwd?: string; group?: string } = {}): string[] {
  const account = lookupAccount(uid, files.passwd);
  const names = new Set<string>();
  for (const [name, , gid, members] of accountEntries(files.group ?? '/etc/group')) {
    if (!name) continue;
    const listed = (members ?? '').split(',').map((m) => m.trim());
    if ((account.name === user && Number(gid) === account.gid) || listed.includes(user)) names.add(name);
  }
  return [...names];
}

/** Group names of `user` as the system computes them at login; the files where the native addon is missing. */
export function systemGroupNames(user: string, uid: number): string[] {
  const account = lookupAccount(uid);
  if (account.name !== user) return readGroupsOf(user, uid); // a name the passwd entry for uid does not give: no login to ask about
  try {
    return groupNames(systemGroups(user, account.gid));
  } catch {
    return readGroupsOf(user, uid); // no addon (or an old one): the files still name most groups
  }
}

/** A group lookup cached per account and asked again after a minute (a group change applies within one). */
export function cachedGroupsOf(read: GroupsOf = systemGroupNames, now: () => number = Date.now): GroupsOf {
  const cache = new Map<string, { at: number; groups: string[] }>();
  return (user, uid) => {
    const key = `${uid}:${user}`;
    const hit = cache.get(key);
    if (hit && now() - hit.at < REREAD_MS) return hit.groups;
    const groups = read(user, uid);
    cache.set(key, { at: now(), groups });
    return groups;
  };
}
