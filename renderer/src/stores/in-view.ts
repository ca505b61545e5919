// Live store slices only where a person can see them: a section scrolled out of view keeps
// what it last showed and skips every update until it comes back (then it catches up at once).
import { createContext, useContext, useRef } from 'react';
import { useStore, type StoreApi } from 'zustand';

/** True unless an <InView> above says its section is scrolled out of view. */
export const InViewContext = createContext(true);

/** A slice of `store` that stops changing while the surrounding section is out of view. */
export function useVisibleSlice<S, T>(store: StoreApi<S>, select: (state: S) => T): T {
  const inView = useContext(InViewContext);
  const last = useRef<{ value: T } | null>(null);
  const value = useStore(store, (state) => (inView || last.current === null ? select(state) : last.current.value));
  last.current = { value };
  return value;
}
