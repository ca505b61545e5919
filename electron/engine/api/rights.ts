// Who may do what: everyone sees and submits; a user acts on their own jobs and processes;
// administrators act on anyone's and alone change the box. Every refusal names the rule and the owner.
import type { Who } from '../../../shared/api.js';
import { ApiError } from './api-error.js';
import type { Caller } from './dispatcher.js';

/** What the engine knows to decide: its own user, and the group whose members administer the box (daemon only). */
export interface BoxRights {
  engineUid: number;
  engineUser: string;
  adminGroup: string | null;
}

/** Who may change the box, in words. */
export function administrators(rights: BoxRights): string {
  return rights.adminGroup ? `an administrator (root or a member of group ${rights.adminGroup})` : `the engine's owner (${rights.engineUser}) or root`;
}

export const mayChangeBox = (caller: Caller, rights: BoxRights): boolean => caller.admin || caller.uid === rights.engineUid;

/** Refuse a change to the box (MIG, MPS, lab policy, sampling) unless the caller administers it. */
export function requireBoxRight(caller: Caller, rights: BoxRights, action: string, because: string): void {
  if (mayChangeBox(caller, rights)) return;
  throw new ApiError('forbidden', `Cannot ${action}: ${because}. Only ${administrators(rights)} may; ${caller.user} (uid ${caller.uid}) is not.`);
}

/** Refuse an action on someone else's job or process unless the caller is an administrator. */
export function requireOwnerRight(caller: Caller, rights: BoxRights, owner: { user: string; uid: number | null }, action: string, what: string): void {
  if (caller.admin || (owner.uid !== null && caller.uid === owner.uid)) return;
  throw new ApiError(
    'forbidden',
    `Cannot ${action} ${what}: it belongs to ${owner.user}${owner.uid === null ? '' : ` (uid ${owner.uid})`}. ${caller.user} may act only on their own jobs and processes; ${administrators(rights)} may act on anyone's.`,
  );
}

/** Whose a job is (null: no such job, for the handler to say so). */
export type JobOwners = (job: string) => { user: string; uid: number | null } | null;

/** The check the API registry declares for a method (`who`), made by the dispatcher before its handler runs. */
export function requireCallerRight(who: Who<never>, params: unknown, caller: Caller, rights: BoxRights, owners: JobOwners | null): void {
  switch (who.kind) {
    case 'anyone':
      return;
    case 'admin': {
      const declared = who as unknown as Extract<Who<unknown>, { kind: 'admin' }>;
      if (declared.unless?.(params)) return;
      requireBoxRight(caller, rights, declared.action(params), declared.because);
      return;
    }
    case 'engine-user':
      if (caller.uid === rights.engineUid) return;
      throw new ApiError('forbidden', `${who.refusal}: this one is ${rights.engineUser}'s (uid ${rights.engineUid}); ${caller.user} (uid ${caller.uid}) is not.`);
    case 'job-owner': {
      if (!owners) throw new Error('A method for a job\'s owner has a handler, but the dispatcher knows no jobs (useJobOwners).');
      const job = (params as { job: string }).job;
      const owner = owners(job);
      if (owner) requireOwnerRight(caller, rights, owner, who.action, job);
      return;
    }
  }
}
