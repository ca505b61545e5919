// Usage reports: ask the engine, and save what is on screen — CSV and JSON built here from the
// same UsageReport (or Slurm jobs' rows, as `gpushare report --by slurm-job` writes them), the HTML
// report (charts, print-ready) made by the engine (reports.export), and in the desktop app its PDF,
// printed by the main process (electron/main/pdf-export.ts).
import { slurmUsageCsv } from '../../../shared/slurm-usage-report.js';
import { reportToCsv } from '../../../shared/usage-report-csv.js';
import { reportFileName, type ReportExportFormat, type ReportFile } from '../../../shared/usage-report.js';
import { reportsStore, requestedRange } from '../stores/reports-store.js';
import { showNotice } from '../stores/ui-store.js';
import { engineApi } from './engine-api.js';
import { reportFileBlob, saveBlob, type SaveTarget } from './report-file.js';

/** What the console saves: the engine's formats, and 'pdf' where the desktop app's main process prints one. */
export type SavedReportFormat = ReportExportFormat | 'pdf';

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
let latestRequest = 0;

export async function loadReport(): Promise<void> {
  const state = reportsStore.getState();
  const request = ++latestRequest;
  reportsStore.setState({ loading: true });
  try {
    const range = requestedRange(state);
    const report = state.by === 'slurm-job' ? await engineApi().call('reports.slurmJobs', range) : await engineApi().call('reports.query', { ...range, by: state.by });
    if (request === latestRequest) reportsStore.setState({ report, loading: false, error: null });
  } catch (error) {
    if (request === latestRequest) reportsStore.setState({ loading: false, error: messageOf(error) });
  }
}

export async function saveReport(format: SavedReportFormat): Promise<void> {
  const { report } = reportsStore.getState();
  if (!report) return;
  try {
    if (format === 'html' || format === 'pdf') {
      // the same range as on screen, so the file shows the same figures. 'pdf' is not the engine's
      // format: the desktop app's main process asks the engine for the HTML and answers with it printed
      const params = { since: report.since, until: report.until, by: report.by, format: format as ReportExportFormat };
      const file: ReportFile = await engineApi().call('reports.export', params);
      saveBlob(file.fileName, reportFileBlob(file), pageTarget);
    } else if (format === 'csv') {
      download(reportFileName(report, format), report.by === 'slurm-job' ? slurmUsageCsv(report.rows) : reportToCsv(report), 'text/csv;charset=utf-8');
    } else {
      download(reportFileName(report, format), JSON.stringify(report, null, 2) + '\n', 'application/json');
    }
  } catch (error) {
    showNotice(`The ${format.toUpperCase()} report could not be made: ${messageOf(error)}`);
  }
}

const pageTarget: SaveTarget = {
  createLink: () => document.createElement('a'),
  append: (link) => document.body.append(link as HTMLAnchorElement),
  createObjectURL: (blob) => URL.createObjectURL(blob),
  revokeObjectURL: (url) => URL.revokeObjectURL(url),
  later: (run, ms) => void setTimeout(run, ms),
};

function download(fileName: string, content: string, mimeType: string): void {
  saveBlob(fileName, new Blob([content], { type: mimeType }), pageTarget);
}
