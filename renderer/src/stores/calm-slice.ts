// A store slice for words that need not follow every update (a clock, running totals): it changes on
// screen at most once per period, the latest value at the period's end, so a burst of updates redraws it once.
import { useEffect, useRef, useState } from 'react';
import type { StoreApi } from 'zustand';

/** `select(store)`, shown anew at most once every `periodMs` (the first change at once, later ones at the period's end). */
export function useCalmSlice<S, T>(store: StoreApi<S>, select: (state: S) => T, periodMs = 1000): T {
  const selectNow = useRef(select);
  selectNow.current = select;
  const [shown, setShown] = useState(() => select(store.getState()));
  useEffect(() => {
    let shownAt = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const show = (): void => {
      timer = null;
      shownAt = Date.now();
      setShown(() => selectNow.current(store.getState()));
    };
    // what changed between the first render and this subscription, without starting a period: the first update shows at once
    setShown(() => selectNow.current(store.getState()));
    const unsubscribe = store.subscribe(() => {
      if (timer !== null) return; // the pending one will read the latest state
      const wait = shownAt + periodMs - Date.now();
      if (wait <= 0) show();
      else timer = setTimeout(show, wait);
    });
    return () => {
      unsubscribe();
      if (timer !== null) clearTimeout(timer);
    };
  }, [store, periodMs]);
  return shown;
}
