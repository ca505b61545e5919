// The rows of a long list inside its scroll box (see row-window.ts), following the scroll:
// a list of any length draws only what a person can see.
import { useCallback, useRef, useState, type UIEvent } from 'react';
import { rowWindow, type RowWindow } from './row-window.js';

export interface VirtualRows extends RowWindow {
  onScroll(event: UIEvent<HTMLElement>): void;
}

export function useVirtualRows(count: number, rowHeight: number, viewportHeight: number): VirtualRows {
  const [scrollTop, setScrollTop] = useState(0);
  const frame = useRef<number | null>(null);
  const onScroll = useCallback((event: UIEvent<HTMLElement>) => {
    const top = event.currentTarget.scrollTop;
    // one re-render per frame however many scroll events arrive
    if (frame.current !== null) cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      setScrollTop(top);
    });
  }, []);
  return { ...rowWindow(count, rowHeight, viewportHeight, scrollTop), onScroll };
}
