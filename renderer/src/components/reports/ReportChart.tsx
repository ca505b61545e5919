// One bar per user, job or GPU (the largest first) for the chosen figure.
import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import type { UsageReport } from '../../../../shared/usage-report.js';
import { useReports } from '../../stores/hooks.js';
import { reportsStore, type ReportMetric } from '../../stores/reports-store.js';
import { useElementWidth } from '../use-element-width.js';
import { rowName } from './report-format.js';

const BARS = 20;
const HEIGHT = 220;
const METRICS: ReadonlyArray<{ metric: ReportMetric; title: string; unit: string; scale: number }> = [
  { metric: 'gpuSeconds', title: 'GPU-hours', unit: 'h', scale: 1 / 3600 },
  { metric: 'smSeconds', title: 'SM-hours', unit: 'h', scale: 1 / 3600 },
  { metric: 'memoryGiBHours', title: 'Memory GiB·h', unit: 'GiB·h', scale: 1 },
  { metric: 'contentionMinutes', title: 'Contention', unit: 'min', scale: 1 },
];
const tooltipStyle = { background: '#1c2230', border: '1px solid #2a3140', fontSize: 12 };

export function ReportChart({ report }: { report: UsageReport }) {
  const metric = useReports((s) => s.metric);
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const chosen = METRICS.find((m) => m.metric === metric)!;
  const data = [...report.rows]
    .sort((a, b) => b[metric] - a[metric])
    .slice(0, BARS)
    .map((row) => ({ name: rowName(row, report.by), label: row.label, value: Number((row[metric] * chosen.scale).toPrecision(4)) }));
  return (
    <div className="report-chart" ref={ref}>
      <div className="report-chart-head">
        <div className="segmented" aria-label="Chart figure">
          {METRICS.map((m) => (
            <button key={m.metric} type="button" className={m.metric === metric ? 'on' : ''} aria-pressed={m.metric === metric} onClick={() => reportsStore.setState({ metric: m.metric })}>
              {m.title}
            </button>
          ))}
        </div>
        {report.rows.length > BARS && <span className="muted">the {BARS} largest of {report.rows.length}</span>}
      </div>
      {width > 0 && (
        <BarChart width={width} height={HEIGHT} data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="#2a3140" vertical={false} />
          <XAxis dataKey="name" stroke="#8b95a7" fontSize={11} interval={0} tickLine={false} />
          <YAxis stroke="#8b95a7" fontSize={11} width={76} tickLine={false} tickFormatter={(v: number) => `${Number(v.toPrecision(3))} ${chosen.unit}`} />
          <Tooltip contentStyle={tooltipStyle} cursor={{ fill: '#ffffff0d' }} formatter={(v) => [`${v} ${chosen.unit}`, chosen.title]} labelFormatter={(name, items) => String(items?.[0]?.payload?.label ?? name)} />
          <Bar dataKey="value" fill="#5aa7ff" isAnimationActive={false} maxBarSize={48} radius={[3, 3, 0, 0]} />
        </BarChart>
      )}
    </div>
  );
}
