// Usage per Slurm job as one self-contained HTML file, in the usage report's style (html.ts): a summary,
// the jobs that used the most GPU time, and every row as `gpushare report --by slurm-job` writes it.
import type { SlurmUsageReport } from '../../../shared/slurm.js';
import { noSlurmUsageSentence, slurmGpusCell, slurmUsageTotals } from '../../../shared/slurm-usage-report.js';
import { MIG_GPU_HOURS_NOTE } from '../../../shared/usage-report.js';
import { card, figure, reportDocument } from './html.js';
import { barChart, escapeXml } from './svg-charts.js';

const GIB = 2 ** 30;
const BARS = 15;
const hours = (v: number): string => `${figure(v)} h`;
const seconds = (v: number): string => `${figure(v)} s`;
const utc = (t: number): string => new Date(t).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

export function slurmReportToHtml(report: SlurmUsageReport, options: { title?: string; generatedAt?: number } = {}): string {
  const title = options.title ?? 'GPU usage by Slurm job';
  const t = slurmUsageTotals(report.rows);
  const range = `${utc(report.since)} — ${utc(report.until)}`;
  const top = [...report.rows].sort((a, b) => b.gpuHours - a.gpuHours).slice(0, BARS).filter((r) => r.gpuHours > 0);
  const leftOut = report.leftOut > 0 ? `<p class="note">${report.leftOut} older Slurm jobs of the range are left out (at most ${report.rows.length} rows at once): a later start lists them.</p>` : '';
  const summary = `
<section>
  <h1>${escapeXml(title)}</h1>
  <p class="range">${escapeXml(range)} · generated ${escapeXml(utc(options.generatedAt ?? Date.now()))} · jobs whose epilog ran in the range</p>
  <div class="cards">
    ${card('Slurm jobs', String(t.jobs))}${card('GPU time', hours(t.gpuHours))}${card('SM time', hours(t.smHours))}${card('Memory', `${figure(t.memoryGiBHours)} GiB·h`)}
    ${card('Peak memory', `${figure(t.peakMemoryBytes / GIB)} GiB`)}${card('Gated', seconds(t.gatedSeconds))}${card('Parked', seconds(t.parkedSeconds))}
  </div>
  <p class="note">GPU hours: each GPU with the job's processes on it, per tick. ${escapeXml(MIG_GPU_HOURS_NOTE)} SM hours: SM utilisation × time (one fully busy GPU for an hour = 1).
  Gated: time its launches waited at the launch gate; parked: time its memory was checkpointed to the host. JobID is sacct's JobIDRaw. GPUs: those its processes ran on; – where not recorded (a job that ended before gpushare kept account and GPUs).</p>
  ${leftOut}
  ${top.length > 0 ? barChart('GPU time by Slurm job', top.map((r) => ({ label: `${r.jobId} · ${r.user}`, value: r.gpuHours })), hours) : ''}
</section>`;
  // units in the head, times without the year (the range above has it), a dense table: fourteen columns fit an A4 page
  const head = ['JobID', 'user', 'account', 'partition', 'QOS', 'GPUs', 'start UTC', 'end UTC', 'GPU h', 'SM h', 'GiB·h', 'peak GiB', 'gated s', 'parked s'];
  const minute = (t: number): string => new Date(t).toISOString().slice(5, 16).replace('T', ' ');
  const details = report.rows.length === 0
    ? `<section><p>${escapeXml(noSlurmUsageSentence(`from ${range}`))}</p></section>`
    : `
<section>
  <h2>Details</h2>
  <table class="dense">
    <thead><tr>${head.map((h, i) => `<th${i > 7 ? ' class="n"' : ''}>${escapeXml(h)}</th>`).join('')}</tr></thead>
    <tbody>
${report.rows.map((r) => `      <tr>${[r.jobId, r.user, r.account ?? '–', r.partition ?? '–', r.qos ?? '–', slurmGpusCell(r.gpus)].map((v) => `<td>${escapeXml(v)}</td>`).join('')}${[minute(r.start), minute(r.end)].map((v) => `<td class="t">${v}</td>`).join('')}${[
    r.gpuHours, r.smHours, r.memoryGiBHours, r.peakMemoryBytes / GIB, r.gatedSeconds, r.parkedSeconds,
  ].map((v) => `<td class="n">${figure(v)}</td>`).join('')}</tr>`).join('\n')}
    </tbody>
  </table>
</section>`;
  return reportDocument(title, [summary, details]);
}
