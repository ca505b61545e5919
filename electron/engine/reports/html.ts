// The report as one self-contained HTML file: inline CSS and SVG charts, no scripts, no
// external resources. Each section starts a new page when printed (the PDF is printed from it).
import { MIG_GPU_HOURS_NOTE, type UsageReport, type UsageRow } from '../../../shared/usage-report.js';
import { barChart, escapeXml, lineChart, type Line } from './svg-charts.js';

const GIB = 2 ** 30;
const BARS = 15;

/** One format for every figure, in the cards, the bars and the table alike: two decimals, two significant digits below 1. */
export function figure(v: number): string {
  if (v === 0) return '0';
  return Math.abs(v) >= 1 ? v.toFixed(2) : String(Number(v.toPrecision(2)));
}
const hours = (seconds: number): string => `${figure(seconds / 3600)} h`;
const gibHours = (v: number): string => `${figure(v)} GiB·h`;
const gib = (bytes: number): string => `${figure(bytes / GIB)} GiB`;
const minutes = (v: number): string => `${figure(v)} min`;
const utc = (t: number): string => new Date(t).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

function timeLabel(rangeMs: number): (t: number) => string {
  return (t) => {
    const iso = new Date(t).toISOString();
    return rangeMs > 3 * 24 * 3600_000 ? iso.slice(5, 10) : rangeMs > 24 * 3600_000 ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
  };
}

const NOUN = { user: 'user', job: 'job', gpu: 'GPU', container: 'container' } as const;

/** The section names, in order; the PDF has one page per section. */
export const HTML_SECTIONS = ['Summary', 'Usage by', 'Over time', 'Details', 'Events'] as const;

export function reportToHtml(report: UsageReport, options: { title?: string } = {}): string {
  const noun = NOUN[report.by];
  const title = options.title ?? `GPU usage by ${noun}`;
  const t = report.totals;
  const top = report.rows.slice(0, BARS);
  const barLabel = (r: UsageRow): string => (report.by === 'user' ? r.key : r.label === r.key ? r.key : `${r.key} · ${r.label}`);
  const bars = (pick: (r: UsageRow) => number) =>
    [...top].sort((a, b) => pick(b) - pick(a)).filter((r) => pick(r) > 0).map((r) => ({ label: barLabel(r), value: pick(r) }));
  const lines = (pick: (p: UsageReport['series']['points'][number]) => Record<string, number>): Line[] =>
    report.series.keys.map((key) => ({ name: key, points: report.series.points.map((p) => [p.start, pick(p)[key] ?? 0] as [number, number]) }));
  const range = report.until - report.since;
  const bucket = report.series.bucketMs >= 3600_000 ? `${report.series.bucketMs / 3600_000} h` : `${report.series.bucketMs / 60_000} min`;

  const summary = `
<section>
  <h1>${escapeXml(title)}</h1>
  <p class="range">${escapeXml(utc(report.since))} — ${escapeXml(utc(report.until))} · generated ${escapeXml(utc(report.generatedAt))} · from ${escapeXml(report.resolution)} data</p>
  <div class="cards">
    ${card('GPU time', hours(t.gpuSeconds))}${card('SM time', hours(t.smSeconds))}${card('Memory', gibHours(t.memoryGiBHours))}
    ${card('Peak memory', gib(t.peakMemoryBytes))}${card('Queued', hours(t.queuedSeconds))}${card('Suspended or parked', hours(t.suspendedSeconds))}
    ${card('Contention', minutes(t.contentionMinutes))}${card(`${noun[0].toUpperCase()}${noun.slice(1)}s`, String(report.rows.length))}
  </div>
  <p class="note">GPU hours: time with any use of a GPU (per GPU), shared among the jobs on it. ${escapeXml(MIG_GPU_HOURS_NOTE)} SM hours: SM utilisation × time (one fully busy GPU for an hour = 1).
  Memory: memory held × time, GiB = 2<sup>30</sup> bytes. Contention: in the summary, time a GPU ran kernels of two or more jobs; per row, the time it ran kernels on a GPU where another job ran kernels too.</p>
</section>`;
  const usage = `
<section>
  <h2>Usage by ${noun}</h2>
  ${barChart('GPU time', bars((r) => r.gpuSeconds), hours)}
  ${barChart('SM time (SM utilisation × time)', bars((r) => r.smSeconds), hours)}
  ${barChart('Memory GiB-hours', bars((r) => r.memoryGiBHours), gibHours)}
</section>`;
  const overTime = `
<section>
  <h2>Over time</h2>
  <p class="note">Averages per ${escapeXml(bucket)}; the ${report.series.keys.length} largest ${noun}s${report.series.keys.includes('others') ? ' and the others together' : ''}.</p>
  ${lineChart('SM in use (GPUs’ worth)', lines((p) => p.smBusy), 'GPUs', timeLabel(range))}
  ${lineChart('Memory held (GiB)', lines((p) => p.memoryGiB), 'GiB', timeLabel(range))}
</section>`;
  const head = [noun, ...(report.by === 'user' ? [] : ['label']), 'GPU time', 'SM time', 'memory', 'peak', 'queued', 'suspended', 'contention'];
  const details = `
<section>
  <h2>Details</h2>
  <table>
    <thead><tr>${head.map((h, i) => `<th${i > (report.by === 'user' ? 0 : 1) ? ' class="n"' : ''}>${escapeXml(h)}</th>`).join('')}</tr></thead>
    <tbody>
${report.rows.map((r) => `      <tr><td>${escapeXml(r.key)}</td>${report.by === 'user' ? '' : `<td>${escapeXml(r.label)}</td>`}${[
    hours(r.gpuSeconds), hours(r.smSeconds), gibHours(r.memoryGiBHours), gib(r.peakMemoryBytes), hours(r.queuedSeconds), hours(r.suspendedSeconds), minutes(r.contentionMinutes),
  ].map((v) => `<td class="n">${escapeXml(v)}</td>`).join('')}</tr>`).join('\n')}
    </tbody>
  </table>
  ${report.rows.length === 0 ? '<p>No usage recorded in this range.</p>' : ''}
</section>`;
  const events = `
<section>
  <h2>Events</h2>
  ${report.events.length === 0 ? '<p>No contention, quota, out-of-memory, suspend or finish events in this range.</p>' : `<table>
    <thead><tr><th>when</th><th>kind</th><th>GPU</th><th>job</th><th>what happened</th></tr></thead>
    <tbody>
${report.events.map((e) => `      <tr class="${escapeXml(e.severity)}"><td>${escapeXml(utc(e.at))}</td><td>${escapeXml(e.kind)}</td><td>${e.gpu ?? ''}</td><td>${escapeXml(e.jobId ?? '')}</td><td>${escapeXml(e.message)}</td></tr>`).join('\n')}
    </tbody>
  </table>`}
</section>`;

  return reportDocument(title, [summary, usage, overTime, details, events]);
}

/** One self-contained page: the report's sections, each a new page when printed, under one style. */
export function reportDocument(title: string, sections: string[]): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeXml(title)}</title>
<style>
  @page { size: A4; margin: 14mm; }
  body { font: 13px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; max-width: 720px; margin: 24px auto; }
  section + section { break-before: page; page-break-before: always; }
  @media screen { section + section { border-top: 1px solid #d0d7de; margin-top: 32px; padding-top: 8px; } }
  h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; }
  .range, .note { color: #59636e; }
  .cards { display: grid; grid-template-columns: repeat(4, 1fr); gap: 8px; margin: 16px 0; }
  .card { border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 10px; }
  .card b { display: block; font-size: 17px; } .card span { color: #59636e; font-size: 12px; }
  svg { display: block; margin: 12px 0; max-width: 100%; height: auto; }
  svg .title { font-weight: 600; font-size: 13px; } svg .label { font-size: 11px; } svg .value, svg .axis { font-size: 10px; fill: #59636e; }
  svg .grid { stroke: #eaeef2; }
  table { border-collapse: collapse; width: 100%; font-size: 11px; }
  th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eaeef2; vertical-align: top; }
  td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
  td.t { white-space: nowrap; font-variant-numeric: tabular-nums; }
  table.dense { font-size: 9.5px; } table.dense th, table.dense td { padding: 2px 3px; }
  tr.warning td { background: #fff8c5; } tr.error td { background: #ffebe9; }
</style>
</head>
<body>
${sections.join('\n')}
</body>
</html>
`;
}

export const card = (label: string, value: string): string => `<div class="card"><b>${escapeXml(value)}</b><span>${escapeXml(label)}</span></div>`;
