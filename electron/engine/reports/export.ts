// A usage report as a file for `reports.export`: the console saves what the CLI would write.
import type { SlurmUsageReport } from '../../../shared/slurm.js';
import { slurmUsageCsv } from '../../../shared/slurm-usage-report.js';
import { reportToCsv } from '../../../shared/usage-report-csv.js';
import { reportFileName, type ReportExportFormat, type ReportFile, type UsageReport } from '../../../shared/usage-report.js';
import { reportToHtml } from './html.js';
import { slurmReportToHtml } from './slurm-html.js';

const MIME_TYPES: Record<ReportExportFormat, string> = {
  html: 'text/html;charset=utf-8',
  csv: 'text/csv;charset=utf-8',
  json: 'application/json',
};

export function reportToFile(report: UsageReport, format: ReportExportFormat): ReportFile {
  const content = format === 'html' ? reportToHtml(report) : format === 'csv' ? reportToCsv(report) : JSON.stringify(report, null, 2) + '\n';
  return { fileName: reportFileName(report, format), mimeType: MIME_TYPES[format], content };
}

/** Usage per Slurm job as a file: the CSV and JSON `gpushare report --by slurm-job` writes, or the HTML report. */
export function slurmReportToFile(report: SlurmUsageReport, format: ReportExportFormat): ReportFile {
  const content = format === 'html' ? slurmReportToHtml(report) : format === 'csv' ? slurmUsageCsv(report.rows) : JSON.stringify(report, null, 2) + '\n';
  return { fileName: reportFileName(report, format), mimeType: MIME_TYPES[format], content };
}
