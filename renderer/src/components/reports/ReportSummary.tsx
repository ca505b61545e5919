// The report's totals in one line of figures.
import { MIG_GPU_HOURS_NOTE, type UsageReport } from '../../../../shared/usage-report.js';
import { formatBytes } from '../../format.js';
import { formatAmount, formatDateTime, formatDuration, formatHours } from './report-format.js';

export function ReportSummary({ report }: { report: UsageReport }) {
  const t = report.totals;
  const figures: Array<[string, string]> = [
    ['GPU-hours', formatHours(t.gpuSeconds)],
    ['SM-hours', formatHours(t.smSeconds)],
    ['Memory GiB·h', formatAmount(t.memoryGiBHours)],
    ['Peak memory', formatBytes(t.peakMemoryBytes)],
    ['Queued', formatDuration(t.queuedSeconds)],
    ['Suspended / parked', formatDuration(t.suspendedSeconds)],
    ['Contention', `${formatAmount(t.contentionMinutes, 1)} min`],
  ];
  return <SummaryLine figures={figures} note={`${formatDateTime(report.since)} – ${formatDateTime(report.until)} · from ${report.resolution} data · ${MIG_GPU_HOURS_NOTE}`} />;
}

/** Labelled figures in one line, and a note on the range at its end (the Slurm job report's too). */
export function SummaryLine({ figures, note }: { figures: Array<[string, string]>; note: string }) {
  return (
    <div className="report-summary">
      {figures.map(([label, value]) => (
        <div key={label} className="stat">
          <span className="stat-label">{label}</span>
          <span className="stat-value">{value}</span>
        </div>
      ))}
      <div className="report-range-note muted">{note}</div>
    </div>
  );
}
