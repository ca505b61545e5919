// Where the notices go: a corner of the window that leaves what they speak of in sight.
// Plain geometry, no DOM, so it is tested in Node.

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type Corner = 'top-right' | 'bottom-right' | 'top-left' | 'bottom-left';
/** In order of preference: top right, under the header, is where a person looks first. */
export const CORNERS: readonly Corner[] = ['top-right', 'bottom-right', 'top-left', 'bottom-left'];

/** The gap to the window's edges; the top one clears the header bar. */
export const NOTICE_MARGIN = { top: 52, side: 14, bottom: 14 } as const;

/** The notices' box when placed in `corner` of a viewport `width` × `height`. */
export function cornerBox(corner: Corner, size: { width: number; height: number }, viewport: { width: number; height: number }): Box {
  const x = corner.endsWith('right') ? viewport.width - NOTICE_MARGIN.side - size.width : NOTICE_MARGIN.side;
  const y = corner.startsWith('top') ? NOTICE_MARGIN.top : viewport.height - NOTICE_MARGIN.bottom - size.height;
  return { x, y, width: size.width, height: size.height };
}

function overlapArea(a: Box, b: Box): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/** The first corner whose box covers none of `avoid`; where every corner covers some, the one covering least. */
export function freeCorner(size: { width: number; height: number }, viewport: { width: number; height: number }, avoid: readonly Box[]): Corner {
  let best: Corner = CORNERS[0];
  let least = Infinity;
  for (const corner of CORNERS) {
    const box = cornerBox(corner, size, viewport);
    const covered = avoid.reduce((sum, target) => sum + overlapArea(box, target), 0);
    if (covered === 0) return corner;
    if (covered < least) [best, least] = [corner, covered];
  }
  return best;
}
