// A unix-socket connection's caller, from the kernel (SO_PEERCRED) and the system's account
// databases: nothing the client says about itself is used.
import type { Socket } from 'node:net';
import { groupId, isNamedAccount, lookupAccount } from '../accounts.js';
import type { Caller } from '../api/dispatcher.js';
import type { BoxRights } from '../api/rights.js';
import { peerIdentity, systemGroups, type PeerIdentity } from './peer-credentials.js';

export function callerOfPeer(socket: Socket, rights: BoxRights, identity: PeerIdentity = peerIdentity(socket)): Caller {
  const { pid, uid, gid } = identity;
  const account = lookupAccount(uid);
  const groups = isNamedAccount(account) ? systemGroups(account.name, gid) : [gid]; // no name: no login to ask about
  const adminGid = rights.adminGroup ? groupId(rights.adminGroup) : null;
  const admin = uid === 0 || (adminGid !== null && (gid === adminGid || groups.includes(adminGid)));
  return { uid, gid, groups, user: account.name, pid, admin, via: 'socket' };
}
