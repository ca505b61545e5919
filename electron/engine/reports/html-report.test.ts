// The HTML/PDF report as a reader gets it, from a simulated report (made up here, labelled so):
// whole labels, one number format, round axis ticks, and a PDF without blank pages.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { USAGE_REPORT_SCHEMA, type UsageReport, type UsageRow } from '../../../shared/usage-report.js';
import { HTML_SECTIONS, reportToHtml } from './html.js';
import { findChromium, htmlToPdf } from './pdf.js';
import { axisTicks, lineChart } from './svg-charts.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);

/** A simulated report by job: `rows` jobs with long command lines, 24 hourly points. */
function simulatedReport(rows: number): UsageReport {
  const list: UsageRow[] = Array.from({ length: rows }, (_, i) => ({
    key: `j${i + 1}`,
    label: `user${i % 7}: python /home/user${i % 7}/projects/long-experiment-name-${i}/train.py --config configs/run-${i}.yaml`,
    gpuSeconds: 3600 * (rows - i) * 1.37,
    smSeconds: 3600 * (rows - i) * 0.91,
    memoryGiBHours: (rows - i) * 12.345,
    peakMemoryBytes: (rows - i) * 2 ** 30,
    queuedSeconds: 90 * i,
    suspendedSeconds: 30 * i,
    contentionMinutes: 1.5 * i,
  }));
  const sum = (pick: (r: UsageRow) => number): number => list.reduce((s, r) => s + pick(r), 0);
  const keys = list.slice(0, 6).map((r) => r.key);
  return {
    schema: USAGE_REPORT_SCHEMA,
    generatedAt: T0 + 24 * HOUR,
    since: T0,
    until: T0 + 24 * HOUR,
    by: 'job',
    resolution: 'hour',
    rows: list,
    totals: {
      gpuSeconds: sum((r) => r.gpuSeconds), smSeconds: sum((r) => r.smSeconds), memoryGiBHours: sum((r) => r.memoryGiBHours),
      peakMemoryBytes: Math.max(...list.map((r) => r.peakMemoryBytes)), queuedSeconds: sum((r) => r.queuedSeconds),
      suspendedSeconds: sum((r) => r.suspendedSeconds), contentionMinutes: sum((r) => r.contentionMinutes),
    },
    series: {
      bucketMs: HOUR,
      keys,
      points: Array.from({ length: 24 }, (_, h) => ({
        start: T0 + h * HOUR,
        smBusy: Object.fromEntries(keys.map((k, i) => [k, 0.37 + ((h * (i + 1)) % 5) * 0.173])),
        memoryGiB: Object.fromEntries(keys.map((k, i) => [k, 3.3 + ((h + i) % 7) * 4.41])),
      })),
    },
    events: [],
  };
}

const texts = (svg: string, cls: string): string[] => [...svg.matchAll(new RegExp(`<text[^>]*class="${cls}"[^>]*>([^<]*)</text>`, 'g'))].map((m) => m[1]);

test('axis ticks are round numbers (1, 2 or 5 × 10^n apart) from 0 to at or above the largest value', () => {
  for (const [max, expected] of [[2.3, [0, 0.5, 1, 1.5, 2, 2.5]], [97, [0, 20, 40, 60, 80, 100]], [0.0123, [0, 0.005, 0.01, 0.015]], [40, [0, 10, 20, 30, 40]], [0, [0, 1]]] as const) {
    assert.deepEqual(axisTicks(max), expected, `ticks for ${max}`);
  }
  const svg = lineChart('Memory held (GiB)', [{ name: 'j1', points: [[T0, 3.3], [T0 + HOUR, 29.76]] }], 'GiB', (t) => String(t));
  assert.deepEqual(texts(svg, 'axis tick-y'), ['0', '10', '20', '30']);
});

test('labels are whole: no bar or legend label is cut short', () => {
  const report = simulatedReport(12);
  const html = reportToHtml(report);
  assert.ok(!html.includes('…'), 'no label ends in an ellipsis');
  for (const row of report.rows) assert.ok(html.includes(row.label), `${row.key}'s label appears whole`);
});

test('one number format: a figure reads the same in the summary, the bars and the table', () => {
  const report = simulatedReport(3);
  const html = reportToHtml(report);
  const top = report.rows[0];
  const gpuHours = `${(top.gpuSeconds / 3600).toFixed(2)} h`; // 4.11 h
  const bars = texts(html, 'value');
  assert.ok(bars.includes(gpuHours), `the GPU-time bar of ${top.key} reads ${gpuHours}: ${bars.join(', ')}`);
  const row = html.match(new RegExp(`<tr><td>${top.key}</td>.*?</tr>`))?.[0] ?? '';
  assert.ok(row.includes(`>${gpuHours}<`), `the table row of ${top.key} reads ${gpuHours}: ${row}`);
  const totalHours = `${(report.totals.gpuSeconds / 3600).toFixed(2)} h`;
  assert.ok(html.includes(`<b>${totalHours}</b>`), `the summary card reads ${totalHours}`);
  const memory = `${top.memoryGiBHours.toFixed(2)} GiB·h`;
  assert.ok(bars.includes(memory) && row.includes(`>${memory}<`), `${top.key}'s memory reads ${memory} in bars and table`);
});

test('the PDF of a long report has no blank page, and every section starts a page', async (t) => {
  if (!findChromium()) return t.skip('no Chromium to print with (apt-get install chromium)');
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
  } catch {
    return t.skip('pdftotext is missing (apt-get install poppler-utils)');
  }
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-report-pdf-'));
  try {
    for (const rows of [3, 15, 60]) {
      const path = join(dir, `report-${rows}.pdf`);
      await htmlToPdf(reportToHtml(simulatedReport(rows)), path);
      const pages = execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' }).split('\f').slice(0, -1);
      const blank = pages.flatMap((p, i) => (p.trim() === '' ? [i + 1] : []));
      assert.deepEqual(blank, [], `${rows} rows: blank pages ${blank.join(', ')} of ${pages.length}`);
      const starts = HTML_SECTIONS.map((s) => pages.findIndex((p) => p.trimStart().startsWith(s === 'Summary' ? 'GPU usage by job' : s)));
      assert.ok(starts.every((i) => i >= 0), `${rows} rows: each section heads a page (${starts.join(', ')})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
