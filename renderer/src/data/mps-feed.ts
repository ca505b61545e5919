// MPS status for the GPU cards: asked for at start, every few seconds, and after a change.
import type { GpushareApi } from '../../../shared/api.js';
import type { ConsoleTransport } from '../transport/transport.js';
import { ApiCallError } from '../../../shared/api-client.js';
import { engineApi } from '../actions/engine-api.js';
import { spatialStore } from '../stores/spatial-store.js';

const POLL_MS = 5000;

export async function refreshMpsStatus(api: GpushareApi = engineApi()): Promise<void> {
  try {
    const mps = await api.call('mps.status', {});
    // anything but a list (an older engine) reads as no MPS information, never as a crash
    spatialStore.setState({ mps: Array.isArray(mps) ? mps : [], mpsUnavailable: null });
  } catch (error) {
    // a lost connection keeps the last answer; an engine without MPS says so
    if (error instanceof ApiCallError && error.code === 'unsupported') spatialStore.setState({ mps: [], mpsUnavailable: error.message });
  }
}

export function startMpsFeed(transport: ConsoleTransport): void {
  transport.onConnection((state) => {
    if (state === 'open') void refreshMpsStatus(transport.api);
  });
  setInterval(() => void refreshMpsStatus(transport.api), POLL_MS);
}
