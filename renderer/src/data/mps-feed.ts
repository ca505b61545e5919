// MPS status for the GPU cards: asked for at start, every few seconds, and after a change.
import type { GpushareApi } from '../../../shared/api.js';
import type { ConsoleTransport } from '../transport/transport.js';
import { ApiCallError } from '../../../shared/api-client.js';
import { engineApi } from '../actions/engine-api.js';
import { jobsStore } from '../stores/jobs-store.js';
import { spatialStore } from '../stores/spatial-store.js';
import { mpsClientKey } from './slice-mps.js';

const POLL_MS = 5000;

export async function refreshMpsStatus(api: GpushareApi = engineApi()): Promise<void> {
  try {
    const mps = await api.call('mps.status', {});
    // anything but a list (an older engine) reads as no MPS information, never as a crash
    const next = Array.isArray(mps) ? mps : [];
    const now = spatialStore.getState();
    // the same answer leaves the store alone: nothing that reads it redraws every poll
    if (now.mpsUnavailable === null && JSON.stringify(now.mps) === JSON.stringify(next)) return;
    spatialStore.setState({ mps: next, mpsUnavailable: null });
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
  // a client job starting or ending starts or stops a daemon: ask then, not at the next poll
  let clients = mpsClientKey(jobsStore.getState().jobs);
  jobsStore.subscribe(({ jobs }) => {
    const key = mpsClientKey(jobs);
    if (key === clients) return;
    clients = key;
    void refreshMpsStatus(transport.api);
  });
}
