// One stacked chart (SM % or memory) of one GPU, per process, over the chosen window.
// Samples come from the rings in data/sample-history, never from React state.
// Every prop handed to Recharts is a stable reference unless its value changed: a new
// function or object on an <Area> makes it re-register in Recharts' store, which costs
// a full recomputation of the chart per series.
import { memo, useMemo, useRef, useState } from 'react';
import { Area, AreaChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import { readTimeline, type TimelineData, type TimelineMetric, type TimelineSeries } from '../data/sample-history.js';
import { formatClock } from '../format.js';
import { highlight } from '../stores/ui-store.js';
import { useUi } from '../stores/hooks.js';
import { useElementWidth } from './use-element-width.js';

const HEIGHT = 150;
const PIXELS_PER_POINT = 3;
const Y_AXIS_WIDTH = 40;
const X_TICKS = 5;
const Y_TICKS = 5;
const MARGIN = { top: 4, right: 26, bottom: 0, left: 0 };
const TOOLTIP_STYLE = { background: '#151a23', border: '1px solid #323a4a', fontSize: 11 };
const GRID_STROKE = '#2a3140';
const AXIS_STROKE = '#3a4354';

interface TickProps {
  x?: number | string;
  y?: number | string;
  payload?: { value: number };
}

/** Plain SVG labels: recharts' own <Text> measures every new label with a forced layout. */
const timeTick = ({ x, y, payload }: TickProps) => (
  <text x={x} y={Number(y) + 10} fontSize={10} fill="#8b95a7" textAnchor="middle">{formatClock(payload?.value ?? 0)}</text>
);
const valueTick = (suffix: string) =>
  function ValueTick({ x, y, payload }: TickProps) {
    return <text x={Number(x) - 3} y={Number(y) + 3} fontSize={10} fill="#8b95a7" textAnchor="end">{`${Math.round(payload?.value ?? 0)}${suffix}`}</text>;
  };
const percentTick = valueTick('%');
const gibTick = valueTick('');

/** Fixed ticks: recharts then skips measuring every label on every update. */
const evenTicks = (from: number, to: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + ((to - from) * i) / (count - 1));

/** One handler per series key for the page's lifetime, so an <Area>'s props stay equal between updates. */
const enterHandlers = new Map<string, () => void>();
const onEnter = (key: string): (() => void) => {
  let handler = enterHandlers.get(key);
  if (!handler) enterHandlers.set(key, (handler = () => highlight(key)));
  return handler;
};
const clearHighlight = (): void => highlight(null);
const labelClock = (t: unknown): string => formatClock(Number(t));
const byValueDescending = (item: { value?: unknown }): number => -Number(item.value);

interface Props {
  gpuIndex: number;
  metric: TimelineMetric;
  start: number;
  end: number;
  /** The upper bound of the y axis: 100 for SM %, the GPU's memory in GiB. */
  yMax: number;
  version: number;
}

interface SeriesProps {
  series: TimelineSeries;
  highlighted: string | null;
}

/** Highlighting one series changes its width and opacity; the others keep equal props. */
function seriesStyle({ series, highlighted }: SeriesProps): { strokeWidth: number; fillOpacity: number } {
  return {
    strokeWidth: highlighted === series.key ? 2 : 1,
    fillOpacity: highlighted === null ? 0.55 : highlighted === series.key ? 0.9 : 0.15,
  };
}

interface ChartProps {
  width: number;
  data: TimelineData;
  xDomain: number[];
  xTicks: number[];
  yDomain: number[];
  yTicks: number[];
  metric: TimelineMetric;
  highlighted: string | null;
  tooltip: boolean;
  formatter: (value: unknown, name: unknown) => [string, string];
}

/** The Recharts part: re-rendered only when the drawn window, the data or the highlight changed. */
const StackedAreas = memo(function StackedAreas({ width, data, xDomain, xTicks, yDomain, yTicks, metric, highlighted, tooltip, formatter }: ChartProps) {
  return (
    <AreaChart width={width} height={HEIGHT} data={data.rows} margin={MARGIN} onMouseLeave={clearHighlight}>
      <CartesianGrid stroke={GRID_STROKE} vertical={false} />
      <XAxis dataKey="t" type="number" domain={xDomain} allowDataOverflow ticks={xTicks} interval={0} tick={timeTick} stroke={AXIS_STROKE} />
      <YAxis domain={yDomain} allowDataOverflow width={Y_AXIS_WIDTH} ticks={yTicks} interval={0} tick={metric === 'sm' ? percentTick : gibTick} stroke={AXIS_STROKE} />
      {tooltip && <Tooltip isAnimationActive={false} labelFormatter={labelClock} formatter={formatter} contentStyle={TOOLTIP_STYLE} itemSorter={byValueDescending} />}
      {data.series.map((s) => {
        const style = seriesStyle({ series: s, highlighted });
        return (
          <Area
            key={s.key}
            dataKey={s.key}
            name={s.key}
            stackId="processes"
            type="linear"
            stroke={s.color}
            fill={s.color}
            strokeWidth={style.strokeWidth}
            fillOpacity={style.fillOpacity}
            isAnimationActive={false}
            dot={false}
            activeDot={false}
            connectNulls
            onMouseEnter={onEnter(s.key)}
          />
        );
      })}
    </AreaChart>
  );
});

function ProcessTimelineChart({ gpuIndex, metric, start, end, yMax }: Props) {
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const highlighted = useUi((s) => s.highlighted);
  // Recharts' tooltip machinery only while the pointer is over this chart
  const [pointerInside, setPointerInside] = useState(false);
  const buckets = Math.max(1, Math.floor((width - Y_AXIS_WIDTH - MARGIN.right) / PIXELS_PER_POINT));
  // The window ends on a whole column (columns aligned to the clock): between two columns
  // nothing visible changes, so the chart is redrawn once per column, not once per sample.
  const windowMs = end - start;
  const columnMs = windowMs / buckets;
  // the memory chart's columns are offset by half a column, so the two charts never redraw on the same update
  const phase = metric === 'memory' ? columnMs / 2 : 0;
  const drawnEnd = columnMs > 0 ? Math.floor((end - phase) / columnMs) * columnMs + phase : end;
  const drawnStart = drawnEnd - windowMs;
  const pinned = highlighted !== null && /^p\d+$/.test(highlighted) ? Number(highlighted.slice(1)) : null;
  // `version` (new samples) is left out on purpose: samples inside the drawn window are all in
  // once the window has moved past them, and the window moves once per column
  const data = useMemo(
    () => readTimeline(gpuIndex, metric, drawnStart, drawnEnd, buckets, pinned),
    [gpuIndex, metric, drawnStart, drawnEnd, buckets, pinned],
  );
  const xDomain = useMemo(() => [drawnStart, drawnEnd], [drawnStart, drawnEnd]);
  const xTicks = useMemo(() => evenTicks(drawnStart, drawnEnd, X_TICKS), [drawnStart, drawnEnd]);
  const yDomain = useMemo(() => [0, yMax], [yMax]);
  const yTicks = useMemo(() => evenTicks(0, yMax, Y_TICKS), [yMax]);
  // the tooltip reads the latest labels through a ref, so its formatter never changes
  const seriesRef = useRef(data.series);
  seriesRef.current = data.series;
  const formatter = useMemo(() => {
    const unit = metric === 'sm' ? '%' : ' GiB';
    const digits = metric === 'sm' ? 0 : 1;
    return (value: unknown, name: unknown): [string, string] => [
      `${Number(value).toFixed(digits)}${unit}`,
      seriesRef.current.find((s) => s.key === name)?.label ?? String(name),
    ];
  }, [metric]);
  return (
    <div
      className="timeline"
      ref={ref}
      data-metric={metric}
      data-points={data.rows.length}
      data-series={data.series.length}
      onMouseEnter={() => setPointerInside(true)}
      onMouseLeave={() => setPointerInside(false)}
    >
      <div className="timeline-title">{metric === 'sm' ? 'SM share by process' : 'Memory by process'}</div>
      {!data.reported && <div className="timeline-note">The driver does not report SM % per process on MIG slices.</div>}
      {width > 0 && (
        <StackedAreas
          width={width}
          data={data}
          xDomain={xDomain}
          xTicks={xTicks}
          yDomain={yDomain}
          yTicks={yTicks}
          metric={metric}
          highlighted={highlighted}
          tooltip={pointerInside}
          formatter={formatter}
        />
      )}
    </div>
  );
}

export const ProcessTimeline = memo(ProcessTimelineChart);
