// Which rows of a long, fixed-row-height list are inside its scroll box (plus a margin),
// so a list of any length draws only what a person can see.
import { useCallback, useRef, useState, type UIEvent } from 'react';

export interface VirtualRows {
  /** Index of the first row to draw. */
  first: number;
  /** One past the last row to draw. */
  end: number;
  /** Pixels of undrawn rows above and below the drawn ones. */
  padTop: number;
  padBottom: number;
  onScroll(event: UIEvent<HTMLElement>): void;
}

/** Rows drawn beyond each edge of the box, so a scroll step never shows a blank. */
const OVERSCAN_ROWS = 6;

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
  const visible = Math.ceil(viewportHeight / rowHeight);
  const first = Math.max(0, Math.min(Math.floor(scrollTop / rowHeight), Math.max(0, count - visible)) - OVERSCAN_ROWS);
  const end = Math.min(count, first + visible + 2 * OVERSCAN_ROWS);
  return { first, end, padTop: first * rowHeight, padBottom: (count - end) * rowHeight, onScroll };
}
