// Whether the engine records usage (store.status and the 'store' event); null until it says, or where it has no store.
import { createStore } from 'zustand/vanilla';
import type { StoreStatus } from '../../../shared/store-status.js';

export const storeStatusStore = createStore<{ status: StoreStatus | null }>(() => ({ status: null }));

export function setStoreStatus(status: StoreStatus | null): void {
  storeStatusStore.setState({ status });
}
