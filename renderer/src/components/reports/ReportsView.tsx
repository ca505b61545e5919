// Usage reports: who used the GPUs how much over a range, by user, job, GPU or container as a chart
// and a table, or per Slurm job as a table; saved as CSV, JSON or the HTML report. A preset range
// refreshes while the view is open.
import { useEffect } from 'react';
import { ALL_REPORT_GROUPINGS } from '../../../../shared/usage-report.js';
import { loadReport } from '../../actions/report-actions.js';
import { useReports } from '../../stores/hooks.js';
import { reportsStore } from '../../stores/reports-store.js';
import { ReportChart } from './ReportChart.js';
import { ReportExportButtons } from './ReportExportButtons.js';
import { ReportRangePicker } from './ReportRangePicker.js';
import { ReportSummary } from './ReportSummary.js';
import { ReportTable } from './ReportTable.js';
import { SlurmJobReport } from './SlurmJobReport.js';

const REFRESH_MS = 10_000;
const GROUP_TITLES = { user: 'User', job: 'Job', gpu: 'GPU', container: 'Container', 'slurm-job': 'Slurm job' } as const;

export function ReportsView() {
  const preset = useReports((s) => s.preset);
  const since = useReports((s) => s.customSince);
  const until = useReports((s) => s.customUntil);
  const by = useReports((s) => s.by);
  const report = useReports((s) => s.report);
  const loading = useReports((s) => s.loading);
  const error = useReports((s) => s.error);
  useEffect(() => {
    void loadReport();
    if (preset === 'custom') return;
    const timer = setInterval(() => void loadReport(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [preset, since, until, by]);
  return (
    <section className="panel reports-view" aria-label="Usage reports">
      <header className="panel-head">
        <h2>Usage report</h2>
        <ReportRangePicker />
        <div className="segmented" aria-label="Group by">
          {ALL_REPORT_GROUPINGS.map((g) => (
            <button key={g} type="button" className={by === g ? 'on' : ''} aria-pressed={by === g} onClick={() => reportsStore.setState({ by: g })}>
              by {GROUP_TITLES[g]}
            </button>
          ))}
        </div>
        <button type="button" className="pause" onClick={() => void loadReport()} disabled={loading}>{loading ? 'Loading…' : 'Refresh'}</button>
        <ReportExportButtons />
      </header>
      {error && <div className="report-error" role="alert">{error}</div>}
      {!report && !error && <div className="muted">Asking the engine for the report…</div>}
      {report?.by === 'slurm-job' && <SlurmJobReport report={report} />}
      {report && report.by !== 'slurm-job' && (
        <>
          <ReportSummary report={report} />
          <ReportChart report={report} />
          <ReportTable report={report} />
        </>
      )}
    </section>
  );
}
