// PDF reports in the desktop app: the engine (its own process, no Chromium) writes the HTML report;
// the main process prints it with webContents.printToPDF and hands the window the PDF. A window's
// `reports.export` with format "pdf" goes to the engine as format "html" under the same id, so the
// engine still checks the caller's rights and the parameters; its answer is printed on the way back.
import type { ReportFile } from '../../shared/usage-report.js';

/** Prints one HTML document; resolves with the PDF's bytes. */
export type HtmlPrinter = (html: string) => Promise<Uint8Array>;

/** What the window gets: the report file, its content base64 (a PDF is bytes, the bridge carries JSON). */
export interface PdfReportFile extends ReportFile {
  encoding: 'base64';
}

interface Request {
  kind: 'request';
  id: number;
  method: string;
  params: unknown;
}

/** The request to send the engine for a window's PDF export (format "html"); null for any other request. */
export function asHtmlExport(request: Request): Request | null {
  const params = request.params as { format?: unknown } | null;
  if (request.method !== 'reports.export' || typeof params !== 'object' || params === null || params.format !== 'pdf') return null;
  return { ...request, params: { ...params, format: 'html' } };
}

/** The engine's HTML report, printed: the same name with .pdf, its bytes base64. */
export async function printedReport(file: ReportFile, print: HtmlPrinter): Promise<PdfReportFile> {
  if (file.mimeType !== 'text/html' && !file.mimeType.startsWith('text/html;')) throw new Error(`The engine answered a PDF export with ${file.mimeType}, not an HTML report.`);
  const pdf = await print(file.content);
  if (Buffer.from(pdf.subarray(0, 5)).toString('latin1') !== '%PDF-') throw new Error('Printing the report gave no PDF.');
  return { fileName: file.fileName.replace(/\.html?$/i, '') + '.pdf', mimeType: 'application/pdf', content: Buffer.from(pdf).toString('base64'), encoding: 'base64' };
}
