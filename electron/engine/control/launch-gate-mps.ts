// The MPS daemons the gate's jobs are clients of, numbered from 1 as slots need them (a slot's 0: no MPS
// client), so the preload library can tell two clients of one daemon, which MPS itself orders by their
// client priority, from clients of two daemons, which it does not (gate_abi.h, "MPS clients").
import { LaunchGateError } from './launch-gate-files.js';
import * as L from './launch-gate-layout.js';
import { KeyNumbers } from './launch-gate-numbers.js';

/** An MPS client as the gate needs it: its daemon (any key naming it, e.g. "gpu 0") and the client priority it started with. */
export interface MpsClientIdentity {
  daemon: string;
  /** CUDA_MPS_CLIENT_PRIORITY as the process started with it: 0 normal, 1 below normal. */
  priority: number;
}

/** The highest CUDA_MPS_CLIENT_PRIORITY MPS accepts (docs.nvidia.com/deploy/mps 4.2.8: 0 NORMAL, 1 BELOW_NORMAL). */
export const MPS_LOWEST_CLIENT_PRIORITY = 1;

export function checkMpsClient(client: MpsClientIdentity | null | undefined): MpsClientIdentity | null {
  if (client === null || client === undefined) return null;
  if (typeof client !== 'object' || typeof client.daemon !== 'string' || !client.daemon) {
    throw new LaunchGateError(`An MPS client needs its daemon (a non-empty key such as "gpu 0") and its client priority (got ${JSON.stringify(client)}).`);
  }
  if (!Number.isInteger(client.priority) || client.priority < 0 || client.priority > MPS_LOWEST_CLIENT_PRIORITY) {
    throw new LaunchGateError(`An MPS client priority is 0 (normal) or 1 (below normal), as CUDA_MPS_CLIENT_PRIORITY (got ${String(client.priority)}).`);
  }
  return { daemon: client.daemon, priority: client.priority };
}

/** The MPS daemons' numbers in the slots: from 1 (a slot's 0 is no client), at most one per slot. */
export const gateMpsDaemons = (): KeyNumbers => new KeyNumbers(1, L.GATE_MAX_SLOTS, 'MPS daemon numbers');
