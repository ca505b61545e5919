// The launch gate's domains (a whole GPU, or one MIG slice of it): numbered as slots need them,
// each with its member masks (one per priority) and its stuck mask, written to the control file.
import * as L from './launch-gate-layout.js';
import { KeyNumbers } from './launch-gate-numbers.js';

interface DomainMasks {
  members: bigint[];
  stuck: bigint;
}

export class GateDomains {
  private readonly numbers = new KeyNumbers(0, L.GATE_MAX_DOMAINS, 'domains');
  private readonly masks: Array<DomainMasks | null> = Array.from({ length: L.GATE_MAX_DOMAINS }, () => null);

  /** `writeU64(position, value)`: a pwrite into the control file. */
  constructor(private readonly writeU64: (position: number, value: bigint) => void) {}

  /** The domain of `key` (a GPU, or GPU/slice), numbered afresh (lowest free) when no slot holds it. */
  take(key: string): number {
    return this.withMasks(this.numbers.take(key));
  }

  /** The domain of `key` at the number a resumed gate gave it (another number if that one is taken by another key). */
  adopt(key: string, index: number): number {
    return this.withMasks(this.numbers.adopt(key, index));
  }

  drop(index: number): void {
    if (this.numbers.drop(index)) this.masks[index] = null; // its masks are all zero by now
  }

  private withMasks(index: number): number {
    this.masks[index] ??= { members: [0n, 0n, 0n], stuck: 0n };
    return index;
  }

  setMember(domain: number, priority: number, slot: number, on: boolean): void {
    const masks = this.masks[domain]!.members;
    masks[priority] = toggle(masks[priority], slot, on);
    this.writeU64(domainBase(domain) + L.DOMAIN.members + priority * 8, masks[priority]);
  }

  /** On: no higher member waits for the slot's launches (it held one back GATE_HOLD_MAX_NS). */
  setStuck(domain: number, slot: number, on: boolean): void {
    const d = this.masks[domain]!;
    d.stuck = toggle(d.stuck, slot, on);
    this.writeU64(domainBase(domain) + L.DOMAIN.stuck, d.stuck);
  }
}

const domainBase = (domain: number): number => L.GATE_DOMAIN_OFFSET + domain * L.GATE_DOMAIN_SIZE;
const toggle = (mask: bigint, slot: number, on: boolean): bigint => (on ? mask | (1n << BigInt(slot)) : mask & ~(1n << BigInt(slot)));
