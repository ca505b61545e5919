// Usage per Slurm job (reports.slurmJobs): the totals in one line, then each job that ended in the
// range as `gpushare report --by slurm-job` lists it, sortable by any column; a sentence when none did.
import { useMemo } from 'react';
import type { SlurmUsageReport } from '../../../../shared/slurm.js';
import { noSlurmUsageSentence, slurmUsageTotals } from '../../../../shared/slurm-usage-report.js';
import { MIG_GPU_HOURS_NOTE } from '../../../../shared/usage-report.js';
import { formatBytes } from '../../format.js';
import { useReports } from '../../stores/hooks.js';
import { reportsStore } from '../../stores/reports-store.js';
import { formatAmount, formatDateTime, formatDuration, formatHours } from './report-format.js';
import { SummaryLine } from './ReportSummary.js';
import { nextSlurmSort, SLURM_COLUMNS, SLURM_ROWS_SHOWN, slurmTableRows } from './slurm-job-rows.js';

function SlurmSummary({ report }: { report: SlurmUsageReport }) {
  const t = slurmUsageTotals(report.rows);
  const figures: Array<[string, string]> = [
    ['Slurm jobs', String(t.jobs)],
    ['GPU-hours', formatHours(t.gpuHours * 3600)],
    ['SM-hours', formatHours(t.smHours * 3600)],
    ['Memory GiB·h', formatAmount(t.memoryGiBHours)],
    ['Peak memory', formatBytes(t.peakMemoryBytes)],
    ['Gated', formatDuration(t.gatedSeconds)],
    ['Parked', formatDuration(t.parkedSeconds)],
  ];
  return <SummaryLine figures={figures} note={`${formatDateTime(report.since)} – ${formatDateTime(report.until)} · jobs whose epilog ran in the range · ${MIG_GPU_HOURS_NOTE}`} />;
}

export function SlurmJobReport({ report }: { report: SlurmUsageReport }) {
  const sort = useReports((s) => s.slurmSort);
  const { rows, notShown } = useMemo(() => slurmTableRows(report, sort), [report, sort]);
  if (report.rows.length === 0) {
    return <p className="report-empty muted">{noSlurmUsageSentence(`from ${formatDateTime(report.since)} to ${formatDateTime(report.until)}`)}</p>;
  }
  return (
    <>
      <SlurmSummary report={report} />
      {report.leftOut > 0 && (
        <p className="muted">{report.leftOut} older Slurm jobs of the range are left out (at most {report.rows.length} at once): a later start lists them.</p>
      )}
      <table className="process-table report-table slurm-report-table">
        <thead>
          <tr>
            {SLURM_COLUMNS.map((c) => (
              <th key={c.key} className={c.numeric ? 'num' : undefined} title={c.hint} aria-sort={sort.key === c.key ? (sort.descending ? 'descending' : 'ascending') : 'none'}>
                <button type="button" onClick={() => reportsStore.setState((s) => ({ slurmSort: nextSlurmSort(s.slurmSort, c.key) }))}>
                  {c.title}
                  {sort.key === c.key ? (sort.descending ? ' ▾' : ' ▴') : ''}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.jobId}@${row.end}`} data-slurm-job={row.jobId}>
              {SLURM_COLUMNS.map((c) => (
                <td key={c.key} className={c.numeric ? 'num' : undefined}>{c.key === 'jobId' ? <b>{c.cell(row)}</b> : c.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {notShown > 0 && <p className="muted">The first {SLURM_ROWS_SHOWN} of {report.rows.length} jobs as sorted; the CSV and JSON exports hold every one.</p>}
    </>
  );
}
