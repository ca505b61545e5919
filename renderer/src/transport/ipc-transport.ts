// Electron: the preload script's two narrow functions, turned into the typed API.
import type { ApiEvent, ApiEvents, ApiMethod, ApiParams, ApiResults, GpushareApi } from '../../../shared/api.js';
import { ApiCallError } from '../../../shared/api-client.js';
import { DESKTOP_LAB_STATUS, type ConnectionMessage, type DesktopLabStatus, type GpushareBridge } from '../../../shared/bridge.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { SnapshotDelta } from '../../../shared/snapshot-delta.js';
import { followSnapshots } from '../../../shared/snapshot-follower.js';
import type { ConnectionState, ConsoleTransport } from './transport.js';

export function ipcTransport(bridge: GpushareBridge): ConsoleTransport {
  // snapshots come as deltas after the first whole one; every snapshot listener hears each whole one rebuilt
  const snapshotListeners = new Set<(snapshot: Snapshot) => void>();
  let following = false;
  const follow = (): void => {
    if (following) return;
    following = true;
    const follower = followSnapshots(
      () => api.call('snapshot.latest', {}),
      (snapshot) => {
        for (const listener of snapshotListeners) listener(snapshot);
      },
    );
    bridge.on('connection', (data) => (data as { state?: unknown }).state !== 'open' && follower.reset());
    bridge.on('snapshot.delta', (delta) => follower.delta(delta as SnapshotDelta));
    bridge.on('snapshot', (snapshot) => follower.whole(snapshot as Snapshot));
  };
  const api: GpushareApi = {
    async call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResults[M]> {
      const answer = await bridge.call(method, params);
      if (!answer.ok) throw ApiCallError.from(answer.error);
      return answer.result as ApiResults[M];
    },
    on<E extends ApiEvent>(event: E, listener: (data: ApiEvents[E]) => void): () => void {
      if (event === 'snapshot') {
        const heard = listener as (snapshot: Snapshot) => void;
        snapshotListeners.add(heard);
        follow();
        return () => snapshotListeners.delete(heard);
      }
      if (event === 'snapshot.delta') return () => undefined; // applied here: listeners hear whole snapshots
      return bridge.on(event, listener as (data: unknown) => void);
    },
  };
  return {
    kind: 'desktop',
    api,
    async labStatus() {
      const answer = await bridge.call(DESKTOP_LAB_STATUS, {});
      return answer.ok ? (answer.result as DesktopLabStatus) : null;
    },
    onConnection: (listener) => onBridgeConnection(bridge, listener),
  };
}

/** The window's connection, as the main process tells it (the engine, or the lab hub, runs in another process). */
export function onBridgeConnection(bridge: GpushareBridge, listener: (state: ConnectionState, detail: string | null) => void): () => void {
  let heard = false;
  const off = bridge.on('connection', (data) => {
    heard = true;
    const { state, detail } = data as Omit<ConnectionMessage, 'kind'>;
    listener(state, detail);
  });
  if (!heard) listener('connecting', null); // nothing told yet
  return off;
}
