// The launch gate's domains (a whole GPU, or one MIG slice of it): numbered as slots need them,
// each with its member masks (one per priority) and its stuck mask, written to the control file.
import { LaunchGateError } from './launch-gate-files.js';
import * as L from './launch-gate-layout.js';

interface DomainRecord {
  key: string;
  slots: number;
  members: bigint[];
  stuck: bigint;
}

export class GateDomains {
  private readonly domains: Array<DomainRecord | null> = Array.from({ length: L.GATE_MAX_DOMAINS }, () => null);

  /** `writeU64(position, value)`: a pwrite into the control file. */
  constructor(private readonly writeU64: (position: number, value: bigint) => void) {}

  /** The domain of `key` (a GPU, or GPU/slice), numbered afresh (lowest free) when no slot holds it. */
  take(key: string): number {
    let index = this.domains.findIndex((d) => d?.key === key);
    if (index < 0) {
      index = this.domains.findIndex((d) => d === null);
      // never reached: a domain is held by at least one of at most GATE_MAX_SLOTS slots
      if (index < 0) throw new LaunchGateError(`All ${L.GATE_MAX_DOMAINS} launch-gate domains are in use.`);
      this.domains[index] = { key, slots: 0, members: [0n, 0n, 0n], stuck: 0n };
    }
    this.domains[index]!.slots++;
    return index;
  }

  /** The domain of `key` at the number a resumed gate gave it (another number if that one is taken by another key). */
  adopt(key: string, index: number): number {
    const held = index < L.GATE_MAX_DOMAINS ? this.domains[index] : undefined;
    if (held === null) {
      this.domains[index] = { key, slots: 1, members: [0n, 0n, 0n], stuck: 0n };
      return index;
    }
    if (held?.key === key) {
      held.slots++;
      return index;
    }
    return this.take(key);
  }

  drop(index: number): void {
    const d = this.domains[index]!;
    if (--d.slots === 0) this.domains[index] = null; // its masks are all zero by now
  }

  setMember(domain: number, priority: number, slot: number, on: boolean): void {
    const masks = this.domains[domain]!.members;
    masks[priority] = toggle(masks[priority], slot, on);
    this.writeU64(domainBase(domain) + L.DOMAIN.members + priority * 8, masks[priority]);
  }

  /** On: no higher member waits for the slot's launches (it held one back GATE_HOLD_MAX_NS). */
  setStuck(domain: number, slot: number, on: boolean): void {
    const d = this.domains[domain]!;
    d.stuck = toggle(d.stuck, slot, on);
    this.writeU64(domainBase(domain) + L.DOMAIN.stuck, d.stuck);
  }
}

const domainBase = (domain: number): number => L.GATE_DOMAIN_OFFSET + domain * L.GATE_DOMAIN_SIZE;
const toggle = (mask: bigint, slot: number, on: boolean): bigint => (on ? mask | (1n << BigInt(slot)) : mask & ~(1n << BigInt(slot)));
