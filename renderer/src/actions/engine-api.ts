// The API the console was started with (chosen once by pickTransport).
import type { GpushareApi } from '../../../shared/api.js';

let current: GpushareApi | null = null;

export function useEngineApiOnce(api: GpushareApi): void {
  current = api;
}

export function engineApi(): GpushareApi {
  if (!current) throw new Error('The console has no engine connection yet.');
  return current;
}
