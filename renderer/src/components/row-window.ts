// Which rows of a fixed-row-height list a scroll box shows, plus a margin each side.

export interface RowWindow {
  /** Index of the first row to draw. */
  first: number;
  /** One past the last row to draw. */
  end: number;
  /** Pixels of undrawn rows above and below the drawn ones. */
  padTop: number;
  padBottom: number;
}

/** Rows drawn beyond each edge of the box, so a scroll step never shows a blank. */
export const OVERSCAN_ROWS = 6;

export function rowWindow(count: number, rowHeight: number, viewportHeight: number, scrollTop: number): RowWindow {
  const visible = Math.ceil(viewportHeight / rowHeight);
  // a list that shrank under a scrolled box still shows its last screenful
  const top = Math.min(Math.floor(Math.max(0, scrollTop) / rowHeight), Math.max(0, count - visible));
  const first = Math.max(0, top - OVERSCAN_ROWS);
  const end = Math.min(count, top + visible + OVERSCAN_ROWS);
  return { first, end, padTop: first * rowHeight, padBottom: (count - end) * rowHeight };
}
