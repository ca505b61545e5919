// Who is on the other end of a unix socket, as the kernel recorded it at connect
// (SO_PEERCRED), and a user's groups from the system (NSS), through the native addon.
import type { Socket } from 'node:net';
import { requireNativeAddon } from '../gpu/nvml-addon.js';

export interface PeerIdentity {
  pid: number;
  uid: number;
  gid: number;
}

/** What the .node exports for this (native/nvml/src/peer.cc). */
interface PeerNative {
  peerCredentials(fd: number): PeerIdentity;
  groupsOf(user: string, gid: number): number[];
}

let native: PeerNative | null = null;

function loadNative(): PeerNative {
  if (native) return native;
  const loaded = requireNativeAddon() as Partial<PeerNative>;
  if (typeof loaded.peerCredentials !== 'function' || typeof loaded.groupsOf !== 'function')
    throw new Error('The native addon is out of date (it has no peerCredentials/groupsOf). Run `npm run build:native`.');
  native = loaded as PeerNative;
  return native;
}

/** The connected peer of a unix socket; throws when the socket has no fd (closed, or not a kernel socket) or is not unix. */
export function peerIdentity(socket: Socket): PeerIdentity {
  // libuv's Pipe handle exposes the fd on Unix; Node has no public call for it.
  const fd = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0)
    throw new Error('This connection has no socket file descriptor (closed already, or not a unix socket), so its peer cannot be identified.');
  return loadNative().peerCredentials(fd);
}

/** user's groups as the system computes them at login: gid plus every supplementary group NSS lists. */
export function systemGroups(user: string, gid: number): number[] {
  return loadNative().groupsOf(user, gid);
}
