// The Slurm job table: each column's figure as a person reads it (from the row `reports.slurmJobs`
// answers), its order when a header is clicked, and the bound on rows drawn.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SlurmUsageReport, SlurmUsageRow } from '../../../../shared/slurm.js';
import { slurmUsageTotals } from '../../../../shared/slurm-usage-report.js';
import { formatDateTime } from './report-format.js';
import { nextSlurmSort, SLURM_COLUMNS, SLURM_ROWS_SHOWN, slurmTableRows, sortSlurmRows } from './slurm-job-rows.js';

const GIB = 1024 ** 3;
const T = Date.UTC(2026, 10, 20, 9);
const row = (jobId: string, extra: Partial<SlurmUsageRow> = {}): SlurmUsageRow => ({
  jobId, user: 'alice', partition: 'gpu', qos: 'high', start: T - 3_600_000, end: T, gpuHours: 2.5, smHours: 1.25, memoryGiBHours: 40, peakMemoryBytes: 18 * GIB, gatedSeconds: 90, parkedSeconds: 0, account: 'vision-lab', gpus: 'GPU 0, GPU 1 · 3g.40gb', ...extra,
});
const cells = (r: SlurmUsageRow): Record<string, string> => Object.fromEntries(SLURM_COLUMNS.map((c) => [c.title, c.cell(r)]));
const report = (rows: SlurmUsageRow[]): SlurmUsageReport => ({ by: 'slurm-job', since: T - 86_400_000, until: T + 60_000, rows, leftOut: 0 });

test("a row's cells: the CLI's columns (job id, user, account, partition, QOS, GPUs, start, end, GPU-h, SM-h, GiB·h, peak, gated, parked) in the console's units", () => {
  assert.deepEqual(cells(row('4242')), {
    'Slurm job': '4242', User: 'alice', Account: 'vision-lab', Partition: 'gpu', QOS: 'high', GPUs: 'GPU 0, GPU 1 · 3g.40gb',
    Start: formatDateTime(T - 3_600_000), End: formatDateTime(T),
    'GPU-h': '2.50', 'SM-h': '1.25', 'Mem GiB·h': '40.00', 'Peak mem': '18.0 GiB', Gated: '1.5 min', Parked: '0',
  });
  const small = cells(row('7', { partition: null, qos: null, gpuHours: 0.002, smHours: 0.0005, memoryGiBHours: 0.004, peakMemoryBytes: 512 * 1024 ** 2, gatedSeconds: 3.25 }));
  assert.deepEqual([small.Partition, small.QOS], ['–', '–'], 'no partition or QOS: a dash, not "null"');
  const old = cells(row('8', { account: null, gpus: null }));
  assert.deepEqual([old.Account, old.GPUs], ['–', '–'], 'a row from before account and GPUs were kept: dashes');
  assert.equal(cells(row('9', { gpus: '' })).GPUs, 'none', 'a job none of whose processes was on a GPU');
  assert.deepEqual([small['GPU-h'], small['SM-h'], small['Mem GiB·h'], small['Peak mem'], small.Gated], ['0.0020', '0.0005', '0.0040', '512 MiB', '3.3 s'], 'a short job keeps its figures: four decimals under 36 s');
});

test('sorting: numbers by value, job ids as numbers (999 before 1000), names A to Z with no QOS last either way, ties by end', () => {
  const rows = [row('1000', { gpuHours: 1, user: 'carol', qos: null, end: T + 3 }), row('999', { gpuHours: 3, user: 'bob', qos: 'low', end: T + 1 }), row('1001', { gpuHours: 2, user: 'alice', qos: 'high', end: T + 2 })];
  const ids = (key: Parameters<typeof sortSlurmRows>[1]['key'], descending: boolean): string[] => sortSlurmRows(rows, { key, descending }).map((r) => r.jobId);
  assert.deepEqual(ids('gpuHours', true), ['999', '1001', '1000']);
  assert.deepEqual(ids('gpuHours', false), ['1000', '1001', '999']);
  assert.deepEqual(ids('jobId', false), ['999', '1000', '1001']);
  assert.deepEqual(ids('user', false), ['1001', '999', '1000']);
  assert.deepEqual(ids('qos', false), ['1001', '999', '1000']);
  assert.deepEqual(ids('qos', true), ['999', '1001', '1000'], 'no QOS stays last when the order turns');
  const accounts = [row('1', { account: null }), row('2', { account: 'nlp' }), row('3', { account: 'bio' })];
  assert.deepEqual(sortSlurmRows(accounts, nextSlurmSort({ key: 'end', descending: true }, 'account')).map((r) => r.jobId), ['3', '2', '1'], 'accounts A to Z, none recorded last');
  assert.deepEqual(ids('end', true), ['1000', '1001', '999']);
  const tied = [row('5', { end: T + 2 }), row('6', { end: T + 1 })];
  assert.deepEqual(sortSlurmRows(tied, { key: 'user', descending: false }).map((r) => r.jobId), ['6', '5'], 'equal users: earlier end first');
  assert.deepEqual(rows.map((r) => r.jobId), ['1000', '999', '1001'], "the report's own rows are left in its order (the exports write them so)");
});

test('a header clicked turns its order round; a new column starts with the largest or latest, names with A', () => {
  assert.deepEqual(nextSlurmSort({ key: 'end', descending: true }, 'end'), { key: 'end', descending: false });
  assert.deepEqual(nextSlurmSort({ key: 'end', descending: true }, 'gpuHours'), { key: 'gpuHours', descending: true });
  assert.deepEqual(nextSlurmSort({ key: 'gpuHours', descending: true }, 'user'), { key: 'user', descending: false });
  assert.deepEqual(nextSlurmSort({ key: 'gpuHours', descending: true }, 'jobId'), { key: 'jobId', descending: false });
});

test(`the table draws at most ${SLURM_ROWS_SHOWN} rows, the largest first when sorted so, and counts the rest; totals sum every row`, () => {
  const many = Array.from({ length: SLURM_ROWS_SHOWN + 20 }, (_, i) => row(String(100 + i), { gpuHours: i, peakMemoryBytes: i * GIB, end: T + i }));
  const { rows, notShown } = slurmTableRows(report(many), { key: 'gpuHours', descending: true });
  assert.equal(rows.length, SLURM_ROWS_SHOWN);
  assert.equal(notShown, 20);
  assert.equal(rows[0].jobId, String(100 + SLURM_ROWS_SHOWN + 19));
  const totals = slurmUsageTotals(many);
  assert.equal(totals.jobs, SLURM_ROWS_SHOWN + 20);
  assert.equal(totals.gpuHours, ((SLURM_ROWS_SHOWN + 19) * (SLURM_ROWS_SHOWN + 20)) / 2);
  assert.equal(totals.peakMemoryBytes, (SLURM_ROWS_SHOWN + 19) * GIB, 'peak: the largest, not a sum');
  assert.deepEqual(slurmTableRows(report([row('1')]), { key: 'end', descending: true }), { rows: [row('1')], notShown: 0 });
});
