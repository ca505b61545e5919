// A store slice for words that need not follow every update (a clock, running totals): it changes on
// screen at most once per period, the latest value at the period's end, so a burst of updates redraws it
// once. When it shows anew is calm-gate.ts's.
import { useEffect, useRef, useState } from 'react';
import type { StoreApi } from 'zustand';
import { CalmGate } from './calm-gate.js';

/** `select(store)`, shown anew at most once every `periodMs` (its first change at once, later ones at the period's end). */
export function useCalmSlice<S, T>(store: StoreApi<S>, select: (state: S) => T, periodMs = 1000): T {
  const selectNow = useRef(select);
  selectNow.current = select;
  const [shown, setShown] = useState(() => select(store.getState()));
  useEffect(() => {
    const read = (): T => selectNow.current(store.getState());
    // what changed between the first render and this subscription shows at once
    setShown(() => read());
    const gate = new CalmGate(read, (value) => setShown(() => value), periodMs);
    const unsubscribe = store.subscribe(() => gate.changed());
    return () => {
      unsubscribe();
      gate.stop();
    };
  }, [store, periodMs]);
  return shown;
}
