// A usage report as a file for `reports.export`: the console saves what the CLI would write.
import { reportToCsv } from '../../../shared/usage-report-csv.js';
import { reportFileName, type ReportExportFormat, type ReportFile, type UsageReport } from '../../../shared/usage-report.js';
import { reportToHtml } from './html.js';

const MIME_TYPES: Record<ReportExportFormat, string> = {
  html: 'text/html;charset=utf-8',
  csv: 'text/csv;charset=utf-8',
  json: 'application/json',
};

export function reportToFile(report: UsageReport, format: ReportExportFormat): ReportFile {
  const content = format === 'html' ? reportToHtml(report) : format === 'csv' ? reportToCsv(report) : JSON.stringify(report, null, 2) + '\n';
  return { fileName: reportFileName(report, format), mimeType: MIME_TYPES[format], content };
}
