// Numbers the launch gate hands out per key as slots need them (its domains): one number per key while any
// slot holds it, the lowest free first, free again with its last slot.
import { LaunchGateError } from './launch-gate-files.js';

export class KeyNumbers {
  private readonly held = new Map<number, { key: string; slots: number }>();

  /** Numbers first .. first + count - 1; `what` names them in the error when all are held. */
  constructor(private readonly first: number, private readonly count: number, private readonly what: string) {}

  /** The number of `key`, numbered afresh (lowest free) when no slot holds it. */
  take(key: string): number {
    for (const [number, h] of this.held) {
      if (h.key === key) {
        h.slots++;
        return number;
      }
    }
    let number = this.first;
    while (this.held.has(number)) number++;
    // never reached: each number is held by at least one of at most GATE_MAX_SLOTS slots
    if (number >= this.first + this.count) throw new LaunchGateError(`All ${this.count} ${this.what} of the launch gate are in use.`);
    this.held.set(number, { key, slots: 1 });
    return number;
  }

  /** `key` at the number a resumed gate gave it; another number when that one is another key's, out of range, or `key` already has one. */
  adopt(key: string, number: number): number {
    const held = this.held.get(number);
    if (held?.key === key) {
      held.slots++;
      return number;
    }
    const keyHasOne = [...this.held.values()].some((h) => h.key === key);
    if (held || keyHasOne || !Number.isInteger(number) || number < this.first || number >= this.first + this.count) return this.take(key);
    this.held.set(number, { key, slots: 1 });
    return number;
  }

  /** One slot of `number` let go; true when that was its last (the number is free). */
  drop(number: number): boolean {
    const h = this.held.get(number);
    if (!h || --h.slots > 0) return false;
    this.held.delete(number);
    return true;
  }
}
