// Prints an HTML report with Chromium's own printToPDF in a hidden window: no system Chromium needed.
// The report is self-contained and script-free, so the window runs no JavaScript at all.
import { BrowserWindow } from 'electron';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function printHtmlToPdf(html: string): Promise<Uint8Array> {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-print-')); // 0700: the report names users and jobs
  const page = new BrowserWindow({ show: false, webPreferences: { sandbox: true, contextIsolation: true, nodeIntegration: false, javascript: false } });
  try {
    const file = join(dir, 'report.html');
    writeFileSync(file, html, { mode: 0o600 });
    await page.loadFile(file);
    // the page's @page rule sets A4 and its margins
    return await page.webContents.printToPDF({ printBackground: true, preferCSSPageSize: true });
  } finally {
    page.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
