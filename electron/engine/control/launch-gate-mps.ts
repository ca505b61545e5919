// The MPS daemons the gate's jobs are clients of, numbered from 1 as slots need them (a slot's 0: no MPS
// client), so the preload library can tell two clients of one daemon, which MPS itself orders by their
// client priority, from clients of two daemons, which it does not (gate_abi.h, "MPS clients").
import { LaunchGateError } from './launch-gate-files.js';
import * as L from './launch-gate-layout.js';

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

export class GateMpsDaemons {
  private readonly byKey = new Map<string, { number: number; slots: number }>();

  /** The number of `key`'s daemon, numbered afresh (lowest free, from 1) when no slot holds it. */
  take(key: string): number {
    const held = this.byKey.get(key);
    if (held) {
      held.slots++;
      return held.number;
    }
    const used = new Set([...this.byKey.values()].map((d) => d.number));
    let number = 1;
    while (used.has(number)) number++;
    // never reached: each of at most GATE_MAX_SLOTS slots holds one daemon
    if (number > L.GATE_MAX_SLOTS) throw new LaunchGateError(`All ${L.GATE_MAX_SLOTS} MPS daemon numbers of the launch gate are in use.`);
    this.byKey.set(key, { number, slots: 1 });
    return number;
  }

  /** `key`'s daemon at the number a resumed gate gave it (another number when that one is another daemon's, or it already has one). */
  adopt(key: string, number: number): number {
    const held = this.byKey.get(key);
    const taken = [...this.byKey.values()].some((d) => d.number === number);
    if (held || taken || number < 1 || number > L.GATE_MAX_SLOTS) return this.take(key);
    this.byKey.set(key, { number, slots: 1 });
    return number;
  }

  drop(number: number): void {
    for (const [key, d] of this.byKey) if (d.number === number && --d.slots === 0) this.byKey.delete(key);
  }
}
