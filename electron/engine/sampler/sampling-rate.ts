// How often the sampler may sample: light, so a command line checks --rate without loading the sampler.
export const MIN_RATE_HZ = 0.2;
export const MAX_RATE_HZ = 10;
export const DEFAULT_RATE_HZ = 1;

export function checkRate(hz: number): number {
  if (!Number.isFinite(hz) || hz < MIN_RATE_HZ || hz > MAX_RATE_HZ) {
    throw new RangeError(`Sampling rate must be between ${MIN_RATE_HZ} and ${MAX_RATE_HZ} Hz, got ${hz}.`);
  }
  return hz;
}
