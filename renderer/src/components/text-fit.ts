// Whether a line of text fits a width, measured once per text and font (canvas measureText).
// The process table clips only the cells whose text overflows: a clip on every cell is a
// clip node and a paint chunk per cell that every frame's pre-paint and compositing walk.

/** Canvas and CSS may lay text out a hair apart (tabular digits, hinting): fit with room to spare. */
const SPARE_PX = 4;
const CACHE_LIMIT = 4096;

const widths = new Map<string, number>();
let context: CanvasRenderingContext2D | null | undefined;

/** The text's width in px in `font` (a CSS font shorthand), or Infinity where nothing can measure it. */
export function textWidth(text: string, font: string): number {
  const key = `${font}\n${text}`;
  let width = widths.get(key);
  if (width === undefined) {
    context ??= document.createElement('canvas').getContext('2d');
    if (!context) return Infinity;
    context.font = font;
    width = context.measureText(text).width;
    if (widths.size >= CACHE_LIMIT) widths.clear();
    widths.set(key, width);
  }
  return width;
}

/** True when `text` fits `room` px in `font` with a few px to spare; false before the room is known (0). */
export const fitsWidth = (text: string, font: string, room: number): boolean => room > 0 && textWidth(text, font) + SPARE_PX <= room;

/** The page's own font family at a size, as a canvas font. */
export const pageFont = (sizePx: number): string => `${sizePx}px ${getComputedStyle(document.body).fontFamily}`;
