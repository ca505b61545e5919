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

/** withEngine for one box of the lab list (run, jobs, set --box): its link loaded only when asked for; its refusals name the box. */
export const withBox =
  (name: string) =>
  async <T>(fn: (engine: EngineClient) => Promise<T>): Promise<T> => {
    const { connectToBox } = await import('./lab.js');
    const engine = await connectToBox(name);
    try {
      return await fn(engine);
    } catch (error) {
      if (error instanceof Error && !(error instanceof UsageError)) error.message = `${name}: ${error.message}`;
      throw error;
    } finally {
      engine.close();
    }
  };

/** This machine's engine, or with --box NAME that box's daemon. */
export const engineOn = (box: string | undefined): typeof withEngine => (box === undefined ? withEngine : withBox(box));

export async function jobsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' }, all: { type: 'boolean' }, box: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`gpushare jobs takes no arguments, got "${positionals[0]}".`);
  const jobs = await engineOn(values.box)((engine) => engine.call('jobs.list', { includeFinished: values.all ?? false }));
  process.stdout.write(values.json ? JSON.stringify(jobs, null, 2) + '\n' : renderJobs(jobs, process.stdout.columns ?? 120, values.box) + '\n');
  return 0;
}

/** The jobs as a table; with `box`, each row starts with it (j7 alone would read as this machine's j7). */
export function renderJobs(jobs: readonly JobView[], width = 120, box?: string): string {
  if (jobs.length === 0) return box === undefined ? 'No jobs.' : `No jobs on ${box}.`;
  const rows = jobs.map((j) => [
    ...(box === undefined ? [] : [box]),
    j.id,
    stateText(j),
    j.priority,
    j.gpu === null ? queuedGpuText(j) : j.enrolled ? enrolledGpuText(j) : gpusText(j),
    `${formatBytes(j.usedMemory)}/${quotaOverItsGpus(j) === null ? '-' : formatBytes(quotaOverItsGpus(j))}`, // its quota over all its GPUs, as its memory is
    formatPercent(j.smPercent),
    j.owner,
    enrolledMark(j) + j.argv.join(' '),
  ]);
  const header = [...(box === undefined ? [] : ['BOX']), 'ID', 'STATE', 'PRIORITY', 'GPU', 'MEM/QUOTA', 'SM', 'USER', 'COMMAND'];
  const fixed = table(header.slice(0, -1), rows.map((r) => r.slice(0, -1))).split('\n')[0].length + 2;
  return table(header, rows.map((r) => [...r.slice(0, -1), clip(r[r.length - 1], Math.max(20, width - fixed))]), new Set([header.indexOf('SM')]));
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
