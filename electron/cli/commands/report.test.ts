// `gpushare report` as a user runs it: the built command on a usage database with a known answer.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { UsageReport } from '../../../shared/usage-report.js';
import { HTML_SECTIONS } from '../../engine/reports/html.js';
import { findChromium } from '../../engine/reports/pdf.js';
import { packageRoot } from '../../engine/paths.js';
import { KNOWN_T } from '../../engine/store/testing/known-stream.js';
import { UsageStore } from '../../engine/store/usage-store.js';
import { writeKnownStream } from '../../engine/store/testing/known-stream.js';
import { CLI_ENV } from '../testing/compiled-cli.js';
import { parseTime } from './report.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-report-'));
const db = join(dir, 'usage.db');
const range = ['--since', new Date(KNOWN_T - 3_600_000).toISOString(), '--until', new Date(KNOWN_T + 3_600_000).toISOString()];
after(() => rmSync(dir, { recursive: true, force: true }));
before(async () => {
  const store = await writeKnownStream(db);
  store.recordAlert({ id: 1, kind: 'contention', at: KNOWN_T + 1000, gpu: 0, jobId: 'p101', message: 'p101 and p102 share GPU 0, "both" busy.', severity: 'warning' });
  await store.close();
});

function gpushare(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(packageRoot(), 'electron', 'cli', 'gpushare.js'), ...args], { env: { ...process.env, ...CLI_ENV, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Python's csv module reads the file back (the standard RFC 4180 reader). */
function parseCsvWithPython(path: string): string[][] {
  const script = 'import csv, json, sys\nwith open(sys.argv[1], newline="") as f: print(json.dumps(list(csv.reader(f, strict=True))))';
  return JSON.parse(execFileSync('python3', ['-c', script, path], { encoding: 'utf8' })) as string[][];
}

test('CSV by job: RFC 4180 (CRLF, header, quoting) and parsed back to the same numbers as the JSON report', async () => {
  const csvPath = join(dir, 'by-job.csv');
  const csvRun = await gpushare(['report', ...range, '--by', 'job', '-o', csvPath, '--db', db]);
  assert.equal(csvRun.code, 0, csvRun.stderr);
  assert.match(csvRun.stderr, /Wrote .*by-job\.csv: 5 jobs/);
  const raw = readFileSync(csvPath, 'utf8');
  assert.ok(raw.endsWith('\r\n') && !/[^\r]\n/.test(raw), 'every line ends in CRLF');
  assert.ok(raw.includes('"carol: python finetune.py --lr 3e-4, ""warm"""'), 'a field with a comma and quotes is quoted, quotes doubled');

  const jsonRun = await gpushare(['report', ...range, '--by', 'job', '--format', 'json', '--db', db]);
  assert.equal(jsonRun.code, 0, jsonRun.stderr);
  const report = JSON.parse(jsonRun.stdout) as UsageReport;
  assert.equal(report.schema, 'gpushare.usage-report/1');

  const [header, ...rows] = parseCsvWithPython(csvPath);
  assert.deepEqual(header, ['job', 'label', 'gpu_seconds', 'sm_seconds', 'memory_gib_hours', 'peak_memory_bytes', 'queued_seconds', 'suspended_seconds', 'contention_minutes']);
  assert.equal(rows.length, report.rows.length);
  for (const [i, cells] of rows.entries()) {
    const r = report.rows[i];
    assert.deepEqual(cells.slice(0, 2), [r.key, r.label]);
    const expected = [r.gpuSeconds, r.smSeconds, r.memoryGiBHours, r.peakMemoryBytes, r.queuedSeconds, r.suspendedSeconds, r.contentionMinutes];
    cells.slice(2).map(Number).forEach((v, j) => assert.ok(Math.abs(v - expected[j]) <= 1e-9 * Math.max(1, expected[j]), `${r.key} ${header[j + 2]}: ${v} vs ${expected[j]}`));
  }
  const j1 = rows.find((r) => r[0] === 'j1')!;
  // j1 shared GPU 1 with p103 for its 6 s: half of it is j1's GPU time
  assert.deepEqual(j1.slice(2).map(Number), [3, 4.8, 3 / 3600, 2 ** 29, 62, 2, 0].map((v) => Number(v.toFixed(9))));
});

test('HTML is one self-contained file with charts; the PDF has a page per section', async (t) => {
  const htmlPath = join(dir, 'report.html');
  const html = await gpushare(['report', ...range, '--by', 'user', '-o', htmlPath, '--db', db]);
  assert.equal(html.code, 0, html.stderr);
  const text = readFileSync(htmlPath, 'utf8');
  assert.equal((text.match(/<section>/g) ?? []).length, HTML_SECTIONS.length);
  assert.ok((text.match(/<svg /g) ?? []).length >= 5, 'bar and line charts as inline SVG');
  assert.doesNotMatch(text, /<script|<link|<img|\bsrc=|\bhref=|url\(|@import/i, 'nothing loaded from elsewhere');
  assert.deepEqual([...new Set(text.match(/https?:\/\/[^\s"')]+/g) ?? [])], ['http://www.w3.org/2000/svg'], 'only the SVG namespace, never fetched');
  assert.match(text, /p101 and p102 share GPU 0, &quot;both&quot; busy\./);

  if (!findChromium()) return t.skip('no Chromium here (apt-get install chromium): the PDF is not checked');
  let pdftotext = true;
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
  } catch {
    pdftotext = false;
  }
  const pdfPath = join(dir, 'report.pdf');
  const pdf = await gpushare(['report', ...range, '--by', 'user', '--format', 'pdf', '-o', pdfPath, '--db', db]);
  assert.equal(pdf.code, 0, pdf.stderr);
  const bytes = readFileSync(pdfPath);
  assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
  if (pdftotext) {
    const pages = execFileSync('pdftotext', ['-layout', pdfPath, '-'], { encoding: 'utf8' }).split('\f').filter((p) => p.trim());
    assert.equal(pages.length, HTML_SECTIONS.length, 'one page per section');
    assert.match(pages[0], /GPU usage by user/);
    assert.match(pages[1], /Usage by user/);
    assert.match(pages[2], /Over time/);
    assert.match(pages[3], /Details[\s\S]*alice/);
    assert.match(pages[4], /Events[\s\S]*share GPU 0/);
  } else {
    const pageObjects = bytes.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? [];
    assert.equal(pageObjects.length, HTML_SECTIONS.length, 'one page per section (no pdftotext: counted /Type /Page)');
  }
});

test('bad input gets a clear error and exit code 2; a missing or damaged database says so', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['--since', 'yesterday'], /--since must be a duration like 90m, 12h or 7d, or an ISO date .*got "yesterday"/],
    [['--since', '7d', '--until', '9d'], /--since .* must be before --until/],
    [['--by', 'team'], /--by must be one of user, job, gpu, container; got "team"/],
    [['--format', 'xlsx'], /--format must be one of csv, json, html, pdf; got "xlsx"/],
    [['--format', 'pdf'], /--format pdf needs -o FILE/],
    [['--colour'], /--colour/],
  ];
  for (const [args, message] of cases) {
    const run = await gpushare(['report', ...args, '--db', db]);
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
  }
  const missing = await gpushare(['report', '--db', join(dir, 'nothing-here.db')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /No usage recorded yet: .*nothing-here\.db does not exist/);

  const damaged = join(dir, 'damaged.db');
  writeFileSync(damaged, 'not a database at all '.repeat(300));
  const broken = await gpushare(['report', '--db', damaged]);
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /damaged\.db is damaged/);
  assert.ok(existsSync(damaged), 'a report leaves the engine’s file where it is');
});

test('--db defaults to the XDG data directory', async () => {
  const run = await gpushare(['report'], { XDG_DATA_HOME: join(dir, 'xdg') });
  assert.match(run.stderr, new RegExp(`${join(dir, 'xdg', 'gpushare', 'usage.db').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} does not exist`));
});

test('times: durations back from now and ISO dates', () => {
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);
  assert.equal(parseTime('--since', '90m', now), now - 90 * 60_000);
  assert.equal(parseTime('--since', '7d', now), now - 7 * 86_400_000);
  assert.equal(parseTime('--since', '12h', now), now - 12 * 3_600_000);
  assert.equal(parseTime('--since', '2026-11-01', now), Date.UTC(2026, 10, 1));
  assert.equal(parseTime('--until', '2026-11-01T09:30Z', now), Date.UTC(2026, 10, 1, 9, 30));
  assert.throws(() => parseTime('--since', '7 days', now), /--since must be a duration/);
  assert.throws(() => parseTime('--since', '2026-13-45', now), /--since must be a duration/);
});

test('--by container: a store of processes in no container gives one row, "not in a container", with the by-user totals', async () => {
  const byContainer = await gpushare(['report', ...range, '--by', 'container', '--format', 'json', '--db', db]);
  assert.equal(byContainer.code, 0, byContainer.stderr);
  const report = JSON.parse(byContainer.stdout) as UsageReport;
  assert.equal(report.by, 'container');
  assert.deepEqual(report.rows.map((r) => [r.key, r.label]), [['-', 'not in a container']]);
  const byUser = JSON.parse((await gpushare(['report', ...range, '--by', 'user', '--format', 'json', '--db', db])).stdout) as UsageReport;
  for (const field of ['gpuSeconds', 'smSeconds', 'memoryGiBHours'] as const) {
    assert.ok(Math.abs(report.totals[field] - byUser.totals[field]) <= 1e-9 * byUser.totals[field], `${field}: ${report.totals[field]} ≠ ${byUser.totals[field]}`);
  }
});

test('--by slurm-job as the HTML report (and PDF) holds the rows its CSV has; a format it does not know is named', async (t) => {
  const slurmDb = join(dir, 'slurm.db');
  const store = await UsageStore.open({ path: slurmDb });
  store.recordSlurmUsage({ jobId: '7001', user: 'alice', partition: 'gpu', qos: 'high', start: KNOWN_T - 600_000, end: KNOWN_T, gpuHours: 0.5, smHours: 0.25, memoryGiBHours: 2, peakMemoryBytes: 4 * 2 ** 30, gatedSeconds: 1.5, parkedSeconds: 0, account: 'nlp', gpus: 'GPU 1 · 3g.40gb' });
  await store.flush();
  await store.close();
  const csv = await gpushare(['report', ...range, '--by', 'slurm-job', '--db', slurmDb]);
  assert.equal(csv.code, 0, csv.stderr);
  assert.match(csv.stdout.split('\n')[0], /,ParkedSeconds,Account,GPUs$/, 'account and GPUs are the last columns: a parser of the first twelve reads them as before');
  assert.match(csv.stdout.split('\n')[1], /^7001,alice,gpu,high,.*,nlp,GPU 1 · 3g\.40gb$/);
  const json = await gpushare(['report', ...range, '--by', 'slurm-job', '--format', 'json', '--db', slurmDb]);
  assert.deepEqual(((JSON.parse(json.stdout) as { rows: Array<Record<string, unknown>> }).rows ?? []).map((r) => [r.account, r.gpus]), [['nlp', 'GPU 1 · 3g.40gb']]);
  const htmlPath = join(dir, 'slurm.html');
  const html = await gpushare(['report', ...range, '--by', 'slurm-job', '-o', htmlPath, '--db', slurmDb]);
  assert.equal(html.code, 0, html.stderr);
  const text = readFileSync(htmlPath, 'utf8');
  assert.match(text, /<h1>GPU usage by Slurm job<\/h1>/);
  assert.match(text, /<td>7001<\/td><td>alice<\/td><td>nlp<\/td><td>gpu<\/td><td>high<\/td><td>GPU 1 · 3g\.40gb<\/td><td class="t">\d\d-\d\d \d\d:\d\d<\/td><td class="t">[^<]+<\/td><td class="n">0\.5<\/td>/);
  assert.doesNotMatch(text, /<script|<link|<img|\bsrc=|\bhref=|url\(|@import/i, 'nothing loaded from elsewhere');
  const bad = await gpushare(['report', ...range, '--by', 'slurm-job', '--format', 'xml', '--db', slurmDb]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--format must be one of csv, json, html, pdf; got "xml"/);

  if (!findChromium()) return t.skip('no Chromium here (apt-get install chromium): the PDF is not checked');
  const pdfPath = join(dir, 'slurm.pdf');
  const pdf = await gpushare(['report', ...range, '--by', 'slurm-job', '--format', 'pdf', '-o', pdfPath, '--db', slurmDb]);
  assert.equal(pdf.code, 0, pdf.stderr);
  assert.equal(readFileSync(pdfPath).subarray(0, 5).toString(), '%PDF-');
});
