// Every user, job or GPU of the report with its accounting figures, and the totals.
import { MIG_GPU_HOURS_NOTE, type UsageReport, type UsageTotals } from '../../../../shared/usage-report.js';
import { formatBytes } from '../../format.js';
import { formatAmount, formatDuration, formatHours } from './report-format.js';

const NOUN = { user: 'User', job: 'Job', gpu: 'GPU', container: 'Container' } as const;

function Figures({ row }: { row: UsageTotals }) {
  return (
    <>
      <td className="num">{formatHours(row.gpuSeconds)}</td>
      <td className="num">{formatHours(row.smSeconds)}</td>
      <td className="num">{formatAmount(row.memoryGiBHours)}</td>
      <td className="num">{formatBytes(row.peakMemoryBytes)}</td>
      <td className="num">{formatDuration(row.queuedSeconds)}</td>
      <td className="num">{formatDuration(row.suspendedSeconds)}</td>
      <td className="num">{formatAmount(row.contentionMinutes, 1)}</td>
    </>
  );
}

export function ReportTable({ report }: { report: UsageReport }) {
  return (
    <table className="process-table report-table">
      <thead>
        <tr>
          <th>{NOUN[report.by]}</th>
          <th>Label</th>
          <th className="num" title={MIG_GPU_HOURS_NOTE}>GPU-h</th>
          <th className="num">SM-h</th>
          <th className="num">Mem GiB·h</th>
          <th className="num">Peak mem</th>
          <th className="num">Queued</th>
          <th className="num">Suspended / parked</th>
          <th className="num">Contention min</th>
        </tr>
      </thead>
      <tbody>
        {report.rows.length === 0 && (
          <tr>
            <td colSpan={9} className="empty-row">No GPU use recorded in this range.</td>
          </tr>
        )}
        {report.rows.map((row) => (
          <tr key={row.key} data-key={row.key}>
            <td><b>{report.by === 'gpu' ? `GPU ${row.key}` : row.key}</b></td>
            <td className="command" title={row.label}>{row.label}</td>
            <Figures row={row} />
          </tr>
        ))}
      </tbody>
      {report.rows.length > 1 && (
        <tfoot>
          <tr>
            <td><b>Total</b></td>
            <td className="muted">{report.rows.length} {NOUN[report.by].toLowerCase()}s · peak is the largest</td>
            <Figures row={report.totals} />
          </tr>
        </tfoot>
      )}
    </table>
  );
}
