// Usage reports: ask the engine, and save what is on screen — CSV and JSON built here from the
// same UsageReport, the HTML report (charts, print-ready) made by the engine (reports.export).
import { reportToCsv } from '../../../shared/usage-report-csv.js';
import { reportFileName, type ReportExportFormat } from '../../../shared/usage-report.js';
import { reportsStore, requestedRange } from '../stores/reports-store.js';
import { showNotice } from '../stores/ui-store.js';
import { engineApi } from './engine-api.js';

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
let latestRequest = 0;

export async function loadReport(): Promise<void> {
  const state = reportsStore.getState();
  const request = ++latestRequest;
  reportsStore.setState({ loading: true });
  try {
    const report = await engineApi().call('reports.query', { ...requestedRange(state), by: state.by });
    if (request === latestRequest) reportsStore.setState({ report, loading: false, error: null });
  } catch (error) {
    if (request === latestRequest) reportsStore.setState({ loading: false, error: messageOf(error) });
  }
}

export async function saveReport(format: ReportExportFormat): Promise<void> {
  const { report } = reportsStore.getState();
  if (!report) return;
  try {
    if (format === 'html') {
      // the same range as on screen, so the file shows the same figures
      const file = await engineApi().call('reports.export', { since: report.since, until: report.until, by: report.by, format });
      download(file.fileName, file.content, file.mimeType);
    } else if (format === 'csv') {
      download(reportFileName(report, format), reportToCsv(report), 'text/csv;charset=utf-8');
    } else {
      download(reportFileName(report, format), JSON.stringify(report, null, 2) + '\n', 'application/json');
    }
  } catch (error) {
    showNotice(`The ${format.toUpperCase()} report could not be made: ${messageOf(error)}`);
  }
}

function download(fileName: string, content: string, mimeType: string): void {
  const url = URL.createObjectURL(new Blob([content], { type: mimeType }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
