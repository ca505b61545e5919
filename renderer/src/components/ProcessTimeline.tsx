// One stacked chart (SM % or memory) of one GPU, per process, over the chosen window.
// Samples come from the rings in data/sample-history, never from React state.
import { memo, useMemo } from 'react';
import { Area, AreaChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import { readTimeline, type TimelineMetric } from '../data/sample-history.js';
import { formatClock } from '../format.js';
import { highlight } from '../stores/ui-store.js';
import { useUi } from '../stores/hooks.js';
import { useElementWidth } from './use-element-width.js';

const HEIGHT = 150;
const PIXELS_PER_POINT = 3;
const X_TICKS = 5;
const Y_TICKS = 5;

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

interface Props {
  gpuIndex: number;
  metric: TimelineMetric;
  start: number;
  end: number;
  /** The upper bound of the y axis: 100 for SM %, the GPU's memory in GiB. */
  yMax: number;
  version: number;
}

function ProcessTimelineChart({ gpuIndex, metric, start, end, yMax, version }: Props) {
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const highlighted = useUi((s) => s.highlighted);
  const data = useMemo(
    () => readTimeline(gpuIndex, metric, start, end, Math.max(1, Math.floor((width - 48) / PIXELS_PER_POINT))),
    // version: new samples in the rings
    [gpuIndex, metric, start, end, width, version],
  );
  const unit = metric === 'sm' ? '%' : ' GiB';
  return (
    <div className="timeline" ref={ref} data-metric={metric} data-points={data.rows.length}>
      <div className="timeline-title">{metric === 'sm' ? 'SM share by process' : 'Memory by process'}</div>
      {!data.reported && <div className="timeline-note">The driver does not report SM % per process on MIG slices.</div>}
      {width > 0 && (
        <AreaChart width={width} height={HEIGHT} data={data.rows} margin={{ top: 4, right: 26, bottom: 0, left: 0 }} onMouseLeave={() => highlight(null)}>
          <CartesianGrid stroke="#2a3140" vertical={false} />
          <XAxis dataKey="t" type="number" domain={[start, end]} allowDataOverflow ticks={evenTicks(start, end, X_TICKS)} interval={0} tick={timeTick} stroke="#3a4354" />
          <YAxis domain={[0, yMax]} allowDataOverflow width={40} ticks={evenTicks(0, yMax, Y_TICKS)} interval={0} tick={metric === 'sm' ? percentTick : gibTick} stroke="#3a4354" />
          <Tooltip
            isAnimationActive={false}
            labelFormatter={(t) => formatClock(Number(t))}
            formatter={(value, name) => [`${Number(value).toFixed(metric === 'sm' ? 0 : 1)}${unit}`, data.series.find((s) => s.key === name)?.label ?? String(name)]}
            contentStyle={{ background: '#151a23', border: '1px solid #323a4a', fontSize: 11 }}
            itemSorter={(item) => -Number(item.value)}
          />
          {data.series.map((s) => (
            <Area
              key={s.key}
              dataKey={s.key}
              name={s.key}
              stackId="processes"
              type="linear"
              stroke={s.color}
              fill={s.color}
              strokeWidth={highlighted === s.key ? 2 : 1}
              fillOpacity={highlighted === null ? 0.55 : highlighted === s.key ? 0.9 : 0.15}
              isAnimationActive={false}
              dot={false}
              activeDot={false}
              connectNulls
              onMouseEnter={() => highlight(s.key)}
            />
          ))}
        </AreaChart>
      )}
    </div>
  );
}

export const ProcessTimeline = memo(ProcessTimelineChart);
