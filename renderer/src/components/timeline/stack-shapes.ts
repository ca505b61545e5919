// The stacked bands of a timeline in the pixels of the chart's own scales: each band's edges
// as numbers, which the canvas traces directly (its SVG path strings are built only when read:
// writing and parsing them was most of a redraw). Kept pure: rows and scales in, edges out.
import type { TimelineData } from '../../data/sample-history.js';

export type Scale = (value: number) => number | undefined;

/** What a band is traced onto: a canvas context (or a Path2D), kept DOM-free for the unit tests. */
export interface PathSink {
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  closePath(): void;
}

export class StackShape {
  constructor(
    readonly key: string,
    readonly color: string,
    /** Pixel x of each row (shared by the layout's shapes). */
    readonly xs: Float32Array,
    /** Pixel y of the band's upper and lower edge at each row. */
    readonly top: Float32Array,
    readonly bottom: Float32Array,
  ) {}

  /** The band's upper edge as an SVG path, stroked. */
  get line(): string {
    let line = '';
    for (let i = 0; i < this.xs.length; i++) line += `${i === 0 ? 'M' : 'L'}${this.xs[i]},${this.top[i]}`;
    return line;
  }

  /** The filled band between this series and the ones under it, as an SVG path ('' with no rows). */
  get area(): string {
    if (this.xs.length === 0) return '';
    let area = this.line;
    for (let i = this.xs.length - 1; i >= 0; i--) area += `L${this.xs[i]},${this.bottom[i]}`;
    return `${area}Z`;
  }

  /** The band's upper edge onto a canvas path (the same points as `line`). */
  traceLine(context: PathSink): void {
    for (let i = 0; i < this.xs.length; i++) {
      if (i === 0) context.moveTo(this.xs[i], this.top[i]);
      else context.lineTo(this.xs[i], this.top[i]);
    }
  }

  /** The band onto a canvas path (the same points as `area`). */
  traceArea(context: PathSink): void {
    if (this.xs.length === 0) return;
    this.traceLine(context);
    for (let i = this.xs.length - 1; i >= 0; i--) context.lineTo(this.xs[i], this.bottom[i]);
    context.closePath();
  }
}

export interface StackLayout {
  /** Pixel x of each row. */
  xs: Float32Array;
  shapes: StackShape[];
}

const round = (v: number): number => Math.round(v * 10) / 10;

/**
 * Series stacked bottom to top in the order given; `offset` moves row times onto the x axis.
 * A lone row (the first column of a new window) is drawn across its column, `columnMs` wide:
 * a band needs two points to be seen.
 */
export function stackShapes(data: TimelineData, offset: number, x: Scale, y: Scale, columnMs = 0): StackLayout {
  if (data.rows.length === 1 && columnMs > 0) {
    const [row] = data.rows;
    data = { ...data, rows: [{ ...row, t: row.t - columnMs / 2 }, { ...row, t: row.t + columnMs / 2 }] };
  }
  const n = data.rows.length;
  const xs = new Float32Array(n);
  for (let i = 0; i < n; i++) xs[i] = round(x(data.rows[i].t - offset) ?? 0);
  const sums = new Float64Array(n);
  let bottom = new Float32Array(n);
  for (let i = 0; i < n; i++) bottom[i] = round(y(0) ?? 0);
  const shapes: StackShape[] = [];
  for (const series of data.series) {
    const top = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const value = data.rows[i][series.key];
      sums[i] += value === value && value !== undefined ? value : 0;
      top[i] = round(y(sums[i]) ?? 0);
    }
    shapes.push(new StackShape(series.key, series.color, xs, top, bottom));
    bottom = top;
  }
  return { xs, shapes };
}

/** The row nearest to pixel x (rows are in time order). */
export function nearestRow(xs: Float32Array, px: number): number {
  if (xs.length === 0) return -1;
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] < px) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && px - xs[lo - 1] < xs[lo] - px ? lo - 1 : lo;
}

/** The series whose band holds pixel y at a row, or null over empty space. */
export function bandAt(layout: StackLayout, row: number, py: number): string | null {
  for (const shape of layout.shapes) if (py >= shape.top[row] && py <= shape.bottom[row] && shape.bottom[row] - shape.top[row] > 0) return shape.key;
  return null;
}
