// The Reports view's usage per Slurm job, against the real engine (simulated GPU) whose usage store holds
// rows written by the store's own writer, as the Slurm epilog writes them: a sentence while none is
// recorded, then the rows `gpushare report --by slurm-job` prints, sortable, and in the CSV, JSON and HTML
// exports; with the engine gone, the view's error.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SlurmUsageReport, SlurmUsageRow } from '../shared/slurm.js';
import { slurmUsageCsv } from '../shared/slurm-usage-report.js';
import { browserMissing, eventually, openConsoleHarness, type ConsoleHarness } from './harness.js';

const GIB = 1024 ** 3;
const missing = browserMissing();

describe("the Reports view's usage per Slurm job", { skip: missing ?? false, timeout: 120_000 }, () => {
  let h: ConsoleHarness;
  const now = Date.now();
  const rows: SlurmUsageRow[] = [
    { jobId: '4242', user: 'alice', partition: 'gpu', qos: 'high', start: now - 3 * 3_600_000, end: now - 3_600_000, gpuHours: 2.5, smHours: 1.25, memoryGiBHours: 40, peakMemoryBytes: 18 * GIB, gatedSeconds: 90, parkedSeconds: 0, account: 'vision-lab', gpus: 'GPU 0, GPU 1 · 3g.40gb' },
    { jobId: '4243', user: 'bob', partition: 'debug', qos: null, start: now - 2 * 3_600_000, end: now - 1_800_000, gpuHours: 0.75, smHours: 0.5, memoryGiBHours: 6, peakMemoryBytes: 4 * GIB, gatedSeconds: 0, parkedSeconds: 600, account: null, gpus: null },
  ];
  const view = () => h.page.locator('.reports-view');
  const shownIds = () => view().locator('.slurm-report-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-slurm-job')));
  const download = async (button: string) => {
    const [file] = await Promise.all([h.page.waitForEvent('download'), view().locator('.report-exports').getByRole('button', { name: button }).click()]);
    return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
  };

  before(async () => {
    h = await openConsoleHarness('a100-40gb', { usage: true });
    await h.page.goto(h.web.url);
    await h.page.locator('.gpu-card').first().waitFor({ timeout: 15_000 });
    await h.page.locator('.view-tabs').getByRole('button', { name: 'Reports' }).click();
    await view().getByRole('button', { name: 'by Slurm job' }).click();
  });
  after(async () => h?.close());

  test("with no Slurm job's usage recorded, a sentence says so and where rows come from, not an empty table", async (t) => {
    const sentence = view().locator('.report-empty');
    await sentence.waitFor({ timeout: 10_000 });
    assert.match(await sentence.innerText(), /^No Slurm job's usage recorded yet from .+ to .+: the box daemon records a row at each Slurm job's end \(gpushare slurm epilog\)/);
    assert.equal(await view().locator('table').count(), 0);
    t.diagnostic(`screenshot: ${await h.screenshot('reports-slurm-none')}`);
  });

  test("a seeded Slurm job's figures show in the table, as the CLI's rows, sortable by a column; the CSV export is the CLI's, and JSON and HTML hold it", async (t) => {
    rows.forEach((row) => h.usage!.recordSlurmUsage(row));
    await h.usage!.flush();
    await view().getByRole('button', { name: 'Refresh' }).click();
    await view().locator('tr[data-slurm-job="4242"]').waitFor({ timeout: 10_000 });
    const cells = await view().locator('tr[data-slurm-job="4242"] td').allInnerTexts();
    const heads = await view().locator('.slurm-report-table thead th').allTextContents(); // as written, not as styled (upper case)
    const byHead = Object.fromEntries(heads.map((head, i) => [head.replace(/ [▾▴]$/, ''), cells[i]]));
    assert.deepEqual(
      { ...byHead, Start: undefined, End: undefined },
      { 'Slurm job': '4242', User: 'alice', Account: 'vision-lab', Partition: 'gpu', QOS: 'high', GPUs: 'GPU 0, GPU 1 · 3g.40gb', Start: undefined, End: undefined, 'GPU-h': '2.50', 'SM-h': '1.25', 'Mem GiB·h': '40.00', 'Peak mem': '18.0 GiB', Gated: '1.5 min', Parked: '0' },
    );
    assert.match(byHead.Start, /\d:\d\d/);
    const column = Object.fromEntries(heads.map((head, i) => [head.replace(/ [▾▴]$/, ''), i]));
    const bob = await view().locator('tr[data-slurm-job="4243"] td').allInnerTexts();
    assert.deepEqual([bob[column.QOS], bob[column.Parked], bob[column.Account], bob[column.GPUs]], ['–', '10 min', '–', '–'], "bob's job: no QOS, 10 minutes parked; a row from before account and GPUs were kept shows dashes");
    assert.match(await view().locator('.report-range-note').innerText(), /GPU-hours: a MIG slice counts its share of its GPU/);
    const stats = await view().locator('.report-summary .stat').evaluateAll((divs) => divs.map((d) => [d.querySelector('.stat-label')?.textContent, d.querySelector('.stat-value')?.textContent]));
    assert.deepEqual(stats.slice(0, 5), [['Slurm jobs', '2'], ['GPU-hours', '3.25'], ['SM-hours', '1.75'], ['Memory GiB·h', '46.00'], ['Peak memory', '18.0 GiB']], 'the totals: sums, and the largest peak');

    assert.deepEqual(await shownIds(), ['4243', '4242'], 'newest end first');
    await view().locator('.slurm-report-table th').getByRole('button', { name: 'GPU-h' }).click();
    assert.deepEqual(await shownIds(), ['4242', '4243'], 'most GPU-hours first');
    assert.equal(await view().locator('.slurm-report-table th[aria-sort="descending"]').textContent(), 'GPU-h ▾');
    await view().locator('.slurm-report-table th').getByRole('button', { name: 'GPU-h' }).click();
    assert.deepEqual(await shownIds(), ['4243', '4242'], 'clicked again: fewest first');
    await view().locator('.slurm-report-table th').getByRole('button', { name: 'User' }).click();
    assert.deepEqual(await shownIds(), ['4242', '4243'], 'by user, A to Z');
    t.diagnostic(`screenshot: ${await h.screenshot('reports-slurm-jobs')}`);
    const spilled = await view().locator('.slurm-report-table td, .slurm-report-table th').evaluateAll((cells) => cells.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent));
    assert.deepEqual(spilled, [], 'no text spills into the next column (the start and end times once ran together)');

    const cli = (await h.cli(['report', '--by', 'slurm-job', '--since', '1d', '--format', 'json', '--db', join(h.dir, 'usage.db')])) as SlurmUsageReport;
    assert.deepEqual(cli.rows, rows, 'the CLI reads the seeded rows');
    const csv = await download('CSV');
    assert.match(csv.name, /^gpushare-usage-by-slurm-job-\d{4}-\d\d-\d\d\.csv$/);
    assert.equal(csv.text, slurmUsageCsv(cli.rows), "the console's CSV is the CLI's, byte for byte");
    assert.equal(csv.text.split('\n')[1], `4242,alice,gpu,high,${new Date(rows[0].start).toISOString()},${new Date(rows[0].end).toISOString()},2.500000,1.250000,40.000000,18.000,90.000,0.000,vision-lab,"GPU 0, GPU 1 · 3g.40gb"`);
    const json = await download('JSON');
    assert.deepEqual((JSON.parse(json.text) as SlurmUsageReport).rows, rows);
    const html = await download('HTML report');
    assert.match(html.name, /^gpushare-usage-by-slurm-job-.*\.html$/);
    assert.match(html.text, /<td>4242<\/td><td>alice<\/td><td>vision-lab<\/td><td>gpu<\/td><td>high<\/td><td>GPU 0, GPU 1 · 3g\.40gb<\/td>/);
  });

  test('the range controls ask again (7 d still lists both jobs), and back to by User the usage table returns', async () => {
    const day = await view().locator('.report-range-note').innerText();
    await view().getByRole('button', { name: '7 d' }).click();
    await eventually(async () => (await view().locator('.report-range-note').innerText()).split(' – ')[0] !== day.split(' – ')[0] && (await shownIds()).length === 2, 10_000, 'the 7-day Slurm report (a range starting earlier)');
    await view().getByRole('button', { name: 'by User' }).click();
    await view().locator('.report-table:not(.slurm-report-table)').waitFor({ timeout: 10_000 });
    assert.equal(await view().locator('.slurm-report-table').count(), 0);
    await view().getByRole('button', { name: 'by Slurm job' }).click();
    await view().locator('.slurm-report-table').waitFor({ timeout: 10_000 });
    assert.deepEqual(await shownIds(), ['4242', '4243'], 'the order picked before (by user) is kept');
  });

  test("with the engine gone, the view says so in its error line", async () => {
    await h.web.close();
    await eventually(async () => {
      await view().getByRole('button', { name: 'Refresh' }).click({ timeout: 1000 }).catch(() => undefined);
      return view().locator('.report-error').isVisible();
    }, 10_000, 'the report error');
    assert.match(await view().locator('.report-error').innerText(), /The engine cannot be reached/);
  });
});
