// Draws a GPU tile's figures (tile-figures.ts) on its canvas: in the figures' worker where the page can
// have one (figures-worker.ts), on the page's own thread where it cannot (gpu-figures.ts).
import { FIGURES, meterBar, rowTops, type MeterFigures, type TileFigures } from './tile-figures.js';

type Context = CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D;

/** The theme's colours and font, as the page's style gives them: a canvas has no stylesheet. */
export interface FiguresTheme {
  text: string;
  muted: string;
  util: string;
  mem: string;
  track: string;
  family: string;
}

/** A canvas's size in device pixels, and device pixels per CSS pixel. */
export interface CanvasSize {
  width: number;
  height: number;
  ratio: number;
}

/** Widths of the words drawn, by font and words: a tile's words mostly repeat from one update to the next. */
const widths = new Map<string, number>();
/** Enough for every distinct figure of a lab's screen; past it, the cache starts again. */
const WIDTHS_KEPT = 4096;
/** The font last set by paintFigures (reading `context.font` back would serialize it). */
let fontSet = '';

function setFont(context: Context, font: string): void {
  context.font = fontSet = font;
}

function widthOf(context: Context, text: string): number {
  const key = `${fontSet}\n${text}`;
  let width = widths.get(key);
  if (width === undefined) {
    if (widths.size >= WIDTHS_KEPT) widths.clear();
    widths.set(key, (width = context.measureText(text).width));
  }
  return width;
}

/** `text` cut with an ellipsis to fit `width` (a user's name or line longer than the tile is wide). */
function fit(context: Context, text: string, width: number): string {
  if (widthOf(context, text) <= width) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (context.measureText(text.slice(0, mid) + '…').width <= width) low = mid;
    else high = mid - 1;
  }
  return text.slice(0, low) + '…';
}

function drawMeter(context: Context, width: number, top: number, meter: MeterFigures, fill: string, theme: FiguresTheme): void {
  const middle = top + FIGURES.meterLine / 2;
  context.fillStyle = theme.muted;
  context.textAlign = 'left';
  context.fillText(meter.label, 0, middle);
  const valueWidth = widthOf(context, meter.value);
  context.fillStyle = theme.text;
  context.textAlign = 'right';
  context.fillText(meter.value, width, middle);
  const bar = meterBar(width, valueWidth, meter.share);
  const barTop = middle - FIGURES.barHeight / 2;
  context.fillStyle = theme.track;
  context.beginPath();
  context.roundRect(bar.x, barTop, bar.width, FIGURES.barHeight, FIGURES.barHeight / 2);
  context.fill();
  if (bar.filled > 0) {
    context.fillStyle = fill;
    context.beginPath();
    context.roundRect(bar.x, barTop, bar.filled, FIGURES.barHeight, FIGURES.barHeight / 2);
    context.fill();
  }
}

/** Draws `figures` over the whole canvas, `size` as its resize gave it. */
export function paintFigures(context: Context, size: CanvasSize, figures: TileFigures, theme: FiguresTheme): void {
  const width = size.width / size.ratio;
  context.setTransform(size.ratio, 0, 0, size.ratio, 0, 0);
  context.clearRect(0, 0, width, size.height / size.ratio);
  context.textBaseline = 'middle';
  setFont(context, `11px ${theme.family}`);
  const tops = rowTops(figures.lines.length);
  drawMeter(context, width, tops.util, figures.util, theme.util, theme);
  drawMeter(context, width, tops.mem, figures.mem, theme.mem, theme);
  context.textAlign = 'left';
  // by font, names first, then what each holds: setting a font costs more than the words drawn in it
  setFont(context, `600 11px ${theme.family}`);
  context.fillStyle = theme.text;
  const after = figures.lines.map((line, i) => {
    if (line.name === null) return 0;
    const name = fit(context, line.name, width);
    context.fillText(name, 0, tops.users[i] + FIGURES.userLine / 2);
    return widthOf(context, name + ' ');
  });
  setFont(context, `12px ${theme.family}`);
  context.fillStyle = theme.muted;
  figures.lines.forEach((line, i) => {
    if (after[i] < width) context.fillText(fit(context, line.detail, width - after[i]), after[i], tops.users[i] + FIGURES.userLine / 2);
  });
}
