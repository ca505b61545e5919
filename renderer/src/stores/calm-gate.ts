// When a calm slice (calm-slice.ts) shows its value anew: its first change at once, later ones at most
// once a period, the latest value at the period's end. DOM-free, so its timing is tested with a fake clock.

export interface CalmClock {
  now(): number;
  /** Runs `task` after `ms`; the function returned cancels it. */
  later(task: () => void, ms: number): () => void;
}

export const realClock: CalmClock = {
  now: () => Date.now(),
  later: (task, ms) => {
    const timer = setTimeout(task, ms);
    return () => clearTimeout(timer);
  },
};

export class CalmGate<T> {
  private shown: T;
  private shownAt = -Infinity;
  private cancel: (() => void) | null = null;

  constructor(
    private readonly read: () => T,
    private readonly show: (value: T) => void,
    private readonly periodMs: number,
    private readonly clock: CalmClock = realClock,
  ) {
    this.shown = read();
  }

  /** The store changed: the slice is shown anew now, or at its period's end, or not at all if it reads as shown. */
  changed(): void {
    if (this.cancel !== null) return; // the pending showing will read the latest value
    // a change elsewhere in the store (the connection's state) must not spend the period the slice's first change is shown in
    if (Object.is(this.read(), this.shown)) return;
    const wait = this.shownAt + this.periodMs - this.clock.now();
    if (wait <= 0) this.showNow();
    else this.cancel = this.clock.later(() => this.showNow(), wait);
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }

  private showNow(): void {
    this.cancel = null;
    const value = this.read();
    if (Object.is(value, this.shown)) return; // changed and back within the period
    this.shown = value;
    this.shownAt = this.clock.now();
    this.show(value);
  }
}
