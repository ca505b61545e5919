// The latest snapshot and the connection: what the GPU cards and the table show.
import { createStore } from 'zustand/vanilla';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { ConnectionState } from '../transport/transport.js';

export interface GpusState {
  snapshot: Snapshot | null;
  connection: ConnectionState;
  connectionDetail: string | null;
  transportKind: 'desktop' | 'browser';
}

export const gpusStore = createStore<GpusState>(() => ({
  snapshot: null,
  connection: 'connecting',
  connectionDetail: null,
  transportKind: 'browser',
}));
