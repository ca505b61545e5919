// Usage that is not being recorded must not go unnoticed: the store's trouble, in the engine's words, until it records again.
import { useStore } from 'zustand';
import { storeTroubles } from '../../../shared/store-status.js';
import { storeStatusStore } from '../stores/store-status-store.js';

export function StoreTroubleBanner() {
  const trouble = useStore(storeStatusStore, (s) => storeTroubles(s.status));
  if (!trouble) return null;
  return (
    <div className="engine-warning store-trouble" role="alert">
      {trouble}
    </div>
  );
}
