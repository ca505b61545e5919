// One stacked chart (SM % or memory) of one GPU, per process, over the chosen window.
// Samples come from the rings in data/sample-history, never from React state.
// Recharts draws the frame — axes, grid, plot area — against a window that never moves
// (time relative to the window's end), so it is drawn once, not per sample. The stacked
// bands are a child of the chart that reads Recharts' own scales: <Area> rebuilt ~1,000
// points through Recharts' store on every redraw (30–60 ms per chart in bench/ui). They are
// painted on one canvas, so a redraw is one bitmap, not sixteen SVG paths of a few hundred
// points for the page to parse, lay out and paint (bench/ui's main-thread CPU at 150 updates
// was the same either way on a loaded 2-core machine: the process table is most of it).
import { createContext, memo, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { AreaChart, CartesianGrid, usePlotArea, useXAxisScale, useYAxisScale, XAxis, YAxis } from 'recharts';
import { readTimeline, type TimelineData, type TimelineMetric } from '../data/sample-history.js';
import { formatClock } from '../format.js';
import { highlight } from '../stores/ui-store.js';
import { useUi } from '../stores/hooks.js';
import { bandAt, nearestRow, stackShapes, type StackLayout } from './timeline/stack-shapes.js';
import { useElementWidth } from './use-element-width.js';

const HEIGHT = 150;
const PIXELS_PER_POINT = 4;
const Y_AXIS_WIDTH = 52; // room for "80 GiB"
const X_TICKS = 5;
const Y_TICKS = 5;
const MARGIN = { top: 4, right: 26, bottom: 0, left: 0 };
const GRID_STROKE = '#2a3140';
const AXIS_STROKE = '#3a4354';
const NO_ROWS: never[] = [];

interface TickProps {
  x?: number | string;
  y?: number | string;
  payload?: { value: number };
}

/** "−5 min", "−30 s": how long before the window's end. */
function before(ms: number): string {
  const s = Math.round(-ms / 1000);
  return s >= 120 ? `−${Math.round((s / 60) * 10) / 10} min` : `−${s} s`;
}

/** Plain SVG labels: recharts' own <Text> measures every new label with a forced layout. */
const timeTick = (endLabel: string) =>
  function TimeTick({ x, y, payload }: TickProps) {
    const value = payload?.value ?? 0;
    return <text x={x} y={Number(y) + 10} fontSize={10} fill="#8b95a7" textAnchor={value === 0 ? 'end' : 'middle'}>{value === 0 ? endLabel : before(value)}</text>;
  };
const valueTick = (suffix: string) =>
  function ValueTick({ x, y, payload }: TickProps) {
    return <text className="timeline-value-tick" x={Number(x) - 3} y={Number(y) + 3} fontSize={10} fill="#8b95a7" textAnchor="end">{`${Math.round(payload?.value ?? 0)}${suffix}`}</text>;
  };
const percentTick = valueTick('%');
const gibTick = valueTick(' GiB');

const evenTicks = (from: number, to: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + ((to - from) * i) / (count - 1));

/** Where the pointer is over the bands: a row of the data and the pixel it sits at. */
interface Hover {
  row: number;
  px: number;
}

interface Bands {
  data: TimelineData;
  /** The end of the drawn window: row times are placed relative to it. */
  drawnEnd: number;
  /** One column's span: what a sample's average stands for. */
  columnMs: number;
  highlighted: string | null;
  onHover(hover: Hover | null): void;
}

/** The bands reach the stacked series through context, so a redraw skips the frame. */
const BandsContext = createContext<Bands | null>(null);

function bandStyle(key: string, highlighted: string | null): { strokeWidth: number; fillOpacity: number } {
  return {
    strokeWidth: highlighted === key ? 2 : 1,
    fillOpacity: highlighted === null ? 0.55 : highlighted === key ? 0.9 : 0.15,
  };
}

interface PlotArea {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The bands onto the canvas over the plot area; shapes are in the chart's pixels, so the plot's corner is moved to 0,0. */
function paintBands(canvas: HTMLCanvasElement, layout: StackLayout, plot: PlotArea, highlighted: string | null): void {
  const scale = window.devicePixelRatio || 1;
  const width = Math.round(plot.width * scale);
  const height = Math.round(plot.height * scale);
  if (canvas.width !== width) canvas.width = width;
  if (canvas.height !== height) canvas.height = height;
  const context = canvas.getContext('2d');
  if (!context) return;
  context.setTransform(scale, 0, 0, scale, -plot.x * scale, -plot.y * scale);
  context.clearRect(plot.x, plot.y, plot.width, plot.height);
  for (const shape of layout.shapes) {
    if (shape.xs.length === 0) continue;
    const style = bandStyle(shape.key, highlighted);
    context.globalAlpha = style.fillOpacity;
    context.fillStyle = shape.color;
    context.beginPath();
    shape.traceArea(context);
    context.fill();
    context.globalAlpha = 1;
    context.strokeStyle = shape.color;
    context.lineWidth = style.strokeWidth;
    context.beginPath();
    shape.traceLine(context);
    context.stroke();
  }
}

/** The stacked bands, drawn inside the chart with its scales. */
function StackedBands() {
  const bands = useContext(BandsContext);
  const x = useXAxisScale();
  const y = useYAxisScale();
  const plot = usePlotArea();
  const canvas = useRef<HTMLCanvasElement>(null);
  const data = bands?.data;
  const drawnEnd = bands?.drawnEnd ?? 0;
  const columnMs = bands?.columnMs ?? 0;
  const highlighted = bands?.highlighted ?? null;
  // re-stacked when a column is added or the scales change, not when the highlight moves
  const layout: StackLayout | null = useMemo(() => (data && x && y ? stackShapes(data, drawnEnd, x, y, columnMs) : null), [data, drawnEnd, x, y, columnMs]);
  const plotX = plot?.x ?? 0;
  const plotY = plot?.y ?? 0;
  const plotWidth = plot?.width ?? 0;
  const plotHeight = plot?.height ?? 0;
  useEffect(() => {
    if (canvas.current && layout) paintBands(canvas.current, layout, { x: plotX, y: plotY, width: plotWidth, height: plotHeight }, highlighted);
  }, [layout, plotX, plotY, plotWidth, plotHeight, highlighted]);
  if (!bands || !layout || !plot) return null;
  const onMove = (e: React.MouseEvent<HTMLCanvasElement>): void => {
    const box = e.currentTarget.getBoundingClientRect();
    const px = e.clientX - box.left + plot.x;
    const row = nearestRow(layout.xs, px);
    if (row < 0) return;
    // a lone row is drawn as two points: both read that row
    bands.onHover({ row: Math.min(row, bands.data.rows.length - 1), px: layout.xs[row] });
    highlight(bandAt(layout, row, e.clientY - box.top + plot.y));
  };
  const onLeave = (): void => {
    bands.onHover(null);
    highlight(null);
  };
  return (
    <foreignObject className="timeline-bands" x={plot.x} y={plot.y} width={plot.width} height={plot.height}>
      <canvas ref={canvas} className="timeline-canvas" style={{ width: plot.width, height: plot.height }} onMouseMove={onMove} onMouseLeave={onLeave} />
    </foreignObject>
  );
}

/** What the canvas shows, for assistive technology and tests: one item per band, named as everywhere else. */
const SeriesList = memo(function SeriesList({ series }: { series: TimelineData['series'] }) {
  return (
    <ul className="timeline-series sr-only">
      {series.map((s) => (
        <li key={s.key} data-series={s.key} data-label={s.label}>{s.label}</li>
      ))}
    </ul>
  );
});

interface FrameProps {
  width: number;
  windowMs: number;
  yMax: number;
  metric: TimelineMetric;
  /** What the right end of the time axis says: "now", or the clock while paused. */
  endLabel: string;
}

/** Axes, grid and the bands' place: re-rendered only when the window, width or scale change. */
const ChartFrame = memo(function ChartFrame({ width, windowMs, yMax, metric, endLabel }: FrameProps) {
  const xDomain = useMemo(() => [-windowMs, 0], [windowMs]);
  const xTicks = useMemo(() => evenTicks(-windowMs, 0, X_TICKS), [windowMs]);
  const yDomain = useMemo(() => [0, yMax], [yMax]);
  const yTicks = useMemo(() => evenTicks(0, yMax, Y_TICKS), [yMax]);
  const tick = useMemo(() => timeTick(endLabel), [endLabel]);
  return (
    <AreaChart width={width} height={HEIGHT} data={NO_ROWS} margin={MARGIN}>
      <CartesianGrid stroke={GRID_STROKE} vertical={false} />
      <XAxis dataKey="t" type="number" domain={xDomain} allowDataOverflow ticks={xTicks} interval={0} tick={tick} stroke={AXIS_STROKE} />
      <YAxis type="number" domain={yDomain} allowDataOverflow width={Y_AXIS_WIDTH} ticks={yTicks} interval={0} tick={metric === 'sm' ? percentTick : gibTick} stroke={AXIS_STROKE} />
      <StackedBands />
    </AreaChart>
  );
});

/** The values under the pointer, biggest first. */
function Readout({ data, hover, metric }: { data: TimelineData; hover: Hover; metric: TimelineMetric }) {
  const row = data.rows[hover.row];
  if (!row) return null;
  const unit = metric === 'sm' ? '%' : ' GiB';
  const digits = metric === 'sm' ? 0 : 1;
  const items = data.series.map((s) => ({ series: s, value: row[s.key] ?? 0 })).sort((a, b) => b.value - a.value);
  return (
    <div className="timeline-readout" style={{ left: hover.px }} role="status">
      <div className="timeline-readout-time">{formatClock(row.t)}</div>
      {items.map(({ series, value }) => (
        <div key={series.key} className="timeline-readout-item">
          <span className="swatch" style={{ background: series.color }} />
          <span className="timeline-readout-label">{series.label}</span>
          <b>{`${value.toFixed(digits)}${unit}`}</b>
        </div>
      ))}
    </div>
  );
}

interface Props {
  gpuIndex: number;
  metric: TimelineMetric;
  start: number;
  end: number;
  /** The upper bound of the y axis: 100 for SM %, the GPU's memory in GiB. */
  yMax: number;
  /** Live (the right end is now) or paused. */
  live: boolean;
  /** The GPU is in MIG mode: only there may the driver leave per-process SM % out. */
  migEnabled: boolean;
}

function ProcessTimelineChart({ gpuIndex, metric, start, end, yMax, live, migEnabled }: Props) {
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const highlighted = useUi((s) => s.highlighted);
  const [hover, setHover] = useState<Hover | null>(null);
  const buckets = Math.max(1, Math.floor((width - Y_AXIS_WIDTH - MARGIN.right) / PIXELS_PER_POINT));
  // The window ends on a whole column (columns aligned to the clock): between two columns
  // nothing visible changes, so the bands are redrawn once per column, not once per sample.
  const windowMs = end - start;
  const columnMs = windowMs / buckets;
  // the memory chart's columns are offset by half a column, so the two charts never redraw on the same update
  const phase = metric === 'memory' ? columnMs / 2 : 0;
  const drawnEnd = columnMs > 0 ? Math.floor((end - phase) / columnMs) * columnMs + phase : end;
  const drawnStart = drawnEnd - windowMs;
  const pinned = highlighted !== null && /^p\d+$/.test(highlighted) ? Number(highlighted.slice(1)) : null;
  // new samples are left out of the inputs on purpose: samples inside the drawn window are
  // all in once the window has moved past them, and the window moves once per column
  const data = useMemo(
    () => readTimeline(gpuIndex, metric, drawnStart, drawnEnd, buckets, pinned),
    [gpuIndex, metric, drawnStart, drawnEnd, buckets, pinned],
  );
  const onHover = useCallback((next: Hover | null) => setHover(next), []);
  // no SM % is also what an idle GPU and a first sample look like: only MIG mode explains it
  const migBlind = !data.reported && migEnabled;
  const bands = useMemo(() => ({ data, drawnEnd, columnMs, highlighted, onHover }), [data, drawnEnd, columnMs, highlighted, onHover]);
  return (
    <div className="timeline" ref={ref} data-metric={metric} data-points={data.rows.length} data-series={data.series.length} data-since={data.rows[0]?.t}>
      <div className="timeline-title">{metric === 'sm' ? 'SM share by process' : 'Memory by process'}</div>
      {migBlind && <div className="timeline-note">The driver does not report SM % per process on MIG slices.</div>}
      {!migBlind && data.rows.length === 0 && live && (
        <div className="timeline-note">Collecting samples: a column every {Math.round(columnMs / 1000)} s on this window.</div>
      )}
      {width > 0 && (
        <BandsContext.Provider value={bands}>
          <ChartFrame width={width} windowMs={windowMs} yMax={yMax} metric={metric} endLabel={live ? 'now' : formatClock(drawnEnd)} />
        </BandsContext.Provider>
      )}
      <SeriesList series={data.series} />
      {hover && <Readout data={data} hover={hover} metric={metric} />}
    </div>
  );
}

export const ProcessTimeline = memo(ProcessTimelineChart);
