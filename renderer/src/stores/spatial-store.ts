// MPS daemons per GPU as the engine last reported them (mps.status), for the GPU cards' MPS zones.
import { createStore } from 'zustand/vanilla';
import type { MpsGpuStatus } from '../../../shared/spatial.js';

export interface SpatialState {
  mps: MpsGpuStatus[];
  /** Why there is no MPS status (the engine has no MPS commands, or the call failed). */
  mpsUnavailable: string | null;
}

export const spatialStore = createStore<SpatialState>(() => ({ mps: [], mpsUnavailable: null }));
