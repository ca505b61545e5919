// `--metrics [ADDR:]PORT`, shared by the commands that host an engine (serve, start, engine, daemon).
import { MetricsAddressError, parseMetricsAddress, type MetricsAddress } from '../engine/metrics/metrics-address.js';
import { UsageError } from './args.js';

/** The address to serve metrics on, null when the flag is absent; a bad value is a UsageError naming it. */
export function metricsOption(value: string | undefined): MetricsAddress | null {
  if (value === undefined) return null;
  try {
    return parseMetricsAddress(value);
  } catch (error) {
    if (error instanceof MetricsAddressError) throw new UsageError(error.message);
    throw error;
  }
}
