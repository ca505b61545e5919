// Waiting in a test for something to come true: one loop for every test, so each gives up the same way,
// naming what it waited for. Deadlines are generous: a test asks whether, never how fast.
import { setTimeout as sleep } from 'node:timers/promises';

export interface UntilOptions {
  /** Give up once this long has passed (default 10 s; with `tries` alone, no deadline). */
  timeoutMs?: number;
  /** Give up after this many looks: for steps that move time on themselves, such as a scheduler tick. */
  tries?: number;
  /** The pause between looks (default 50 ms; 0 where the step itself waits). */
  intervalMs?: number;
  /** More to say on giving up: a daemon's output, the jobs' states. */
  detail?: () => string | Promise<string>;
}

/** What a step gives when it has found what it looks for: anything but undefined, null or false. */
export type Found<T> = Exclude<T, undefined | null | false>;

const found = <T>(value: T): value is Found<T> => value !== undefined && value !== null && value !== false;

/** Runs `step` until it gives a value (returned), or throws `gave up waiting for WHAT`. The last look is always taken. */
export async function until<T>(what: string, step: () => T | Promise<T>, options: UntilOptions = {}): Promise<Found<T>> {
  const { tries, intervalMs = 50, detail } = options;
  const timeoutMs = options.timeoutMs ?? (tries === undefined ? 10_000 : Infinity);
  const start = Date.now();
  for (let look = 1; ; look++) {
    const value = await step();
    if (found(value)) return value;
    const elapsed = Date.now() - start;
    if ((tries !== undefined && look >= tries) || elapsed >= timeoutMs) {
      const more = detail ? `\n${await detail()}` : '';
      throw new Error(`gave up waiting for ${what} (${look} looks in ${elapsed} ms)${more}`);
    }
    if (intervalMs > 0) await sleep(intervalMs);
  }
}

/** `until` with the same options for every wait of a test file: `const until = untilWith({ detail: () => box.output })`. */
export const untilWith =
  (defaults: UntilOptions) =>
  <T>(what: string, step: () => T | Promise<T>, options: UntilOptions = {}): Promise<Found<T>> =>
    until(what, step, { ...defaults, ...options });
