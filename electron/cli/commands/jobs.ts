// `gpushare jobs`: the jobs the engine knows, managed and unmanaged, as a table or JSON.
import { slurmJobLabel } from '../../../shared/slurm.js';
import { enrolledGpuText, FINAL_STATES, gpuDemand, gpusText, quotaOverItsGpus, type JobView } from '../../../shared/jobs.js';
import { parseFlags, UsageError } from '../args.js';
import { connectToEngine, type EngineClient } from '../engine-client.js';
import { clip, formatBytes, formatPercent, table } from '../format.js';

/** Connect to the running engine, run `fn`, always disconnect. */
export async function withEngine<T>(fn: (engine: EngineClient) => Promise<T>): Promise<T> {
  const engine = await connectToEngine();
  try {
    return await fn(engine);
  } finally {
    engine.close();
  }
}

export async function jobsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' }, all: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`gpushare jobs takes no arguments, got "${positionals[0]}".`);
  const jobs = await withEngine((engine) => engine.call('jobs.list', { includeFinished: values.all ?? false }));
  process.stdout.write(values.json ? JSON.stringify(jobs, null, 2) + '\n' : renderJobs(jobs, process.stdout.columns ?? 120) + '\n');
  return 0;
}

export function renderJobs(jobs: readonly JobView[], width = 120): string {
  if (jobs.length === 0) return 'No jobs.';
  const rows = jobs.map((j) => [
    j.id,
    stateText(j),
    j.priority,
    j.gpu === null ? queuedGpuText(j) : j.enrolled ? enrolledGpuText(j) : gpusText(j),
    `${formatBytes(j.usedMemory)}/${quotaOverItsGpus(j) === null ? '-' : formatBytes(quotaOverItsGpus(j))}`, // its quota over all its GPUs, as its memory is
    formatPercent(j.smPercent),
    j.owner,
    enrolledMark(j) + j.argv.join(' '),
  ]);
  const header = ['ID', 'STATE', 'PRIORITY', 'GPU', 'MEM/QUOTA', 'SM', 'USER', 'COMMAND'];
  const fixed = table(header.slice(0, -1), rows.map((r) => r.slice(0, -1))).split('\n')[0].length + 2;
  return table(header, rows.map((r) => [...r.slice(0, -1), clip(r[r.length - 1], Math.max(20, width - fixed))]), new Set([5]));
}

/** An enrolled job's command says so, and how it was grouped: "[enrolled: notebook train.ipynb] python …". */
export function enrolledMark(job: JobView): string {
  const e = job.enrolled;
  if (!e) return '';
  if (e.slurm) return `[${slurmJobLabel(e.slurm)}] `;
  const how = e.by === 'tree' ? '' : e.by === 'command' ? ': gpushare enrol' : e.by === 'slurm' && e.name ? `: ${e.name}` : `: ${e.by}${e.name ? ` ${e.name}` : ''}`;
  return `[enrolled${how}] `;
}

function stateText(job: JobView): string {
  if (FINAL_STATES.has(job.state)) return job.signal ? `${job.state} (${job.signal})` : `${job.state} (${job.exitCode ?? '-'})`;
  return job.state;
}

/** Where a queued job asked to run: "auto", "1", "0,2", or "auto×2" for two GPUs the scheduler picks. */
function queuedGpuText(j: JobView): string {
  const { count, named } = gpuDemand(j);
  return named ? named.join(',') : count > 1 ? `auto×${count}` : 'auto';
}
