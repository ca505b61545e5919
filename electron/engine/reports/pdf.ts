// The PDF is the HTML report printed: by Electron's printToPDF when the console registers
// it (electron/main calls setPdfPrinter; the engine never imports electron), else by
// headless Chromium where one is installed.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Print the HTML file at htmlPath; resolve with the PDF's bytes. */
export type PdfPrinter = (htmlPath: string) => Promise<Uint8Array>;

let registered: PdfPrinter | null = null;

/** Electron main registers webContents.printToPDF here; null goes back to Chromium. */
export function setPdfPrinter(printer: PdfPrinter | null): void {
  registered = printer;
}

const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable', '/snap/bin/chromium'];

/** $GPUSHARE_CHROMIUM, else the first Chromium found in the usual places; null when none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.GPUSHARE_CHROMIUM) return existsSync(env.GPUSHARE_CHROMIUM) ? env.GPUSHARE_CHROMIUM : null;
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export class PdfUnavailableError extends Error {}

export async function htmlToPdf(html: string, outPath: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-report-'));
  try {
    const htmlPath = join(dir, 'report.html');
    writeFileSync(htmlPath, html);
    const pdf = registered ? await registered(htmlPath) : await printWithChromium(htmlPath, dir);
    writeFileSync(outPath, pdf);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function printWithChromium(htmlPath: string, dir: string): Promise<Uint8Array> {
  const chromium = findChromium();
  if (!chromium) {
    return Promise.reject(new PdfUnavailableError('Writing a PDF needs Chromium (apt-get install chromium) or the desktop console; `--format html` works without it.'));
  }
  const pdfPath = join(dir, 'report.pdf');
  const args = [
    '--headless', '--no-sandbox', '--disable-gpu', '--no-pdf-header-footer', '--no-first-run', '--disable-extensions',
    `--user-data-dir=${join(dir, 'profile')}`, `--print-to-pdf=${pdfPath}`, pathToFileURL(htmlPath).href,
  ];
  return new Promise((resolve, reject) => {
    execFile(chromium, args, { timeout: 120_000 }, (error, _stdout, stderr) => {
      if (existsSync(pdfPath)) {
        const bytes = readFileSync(pdfPath);
        if (bytes.subarray(0, 5).toString() === '%PDF-') return resolve(bytes);
      }
      const why = error ? error.message.split('\n')[0] : 'no PDF was written';
      reject(new Error(`${chromium} could not print the report (${why})${stderr.trim() ? ': ' + stderr.trim().split('\n').slice(-2).join(' ') : ''}`));
    });
  });
}
