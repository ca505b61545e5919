// `gpushare set`: change a job's priority or quota, or suspend, resume or terminate it.
import { PRIORITIES, parseByteSize, type JobView, type Priority } from '../../../shared/jobs.js';
import { parseFlags, UsageError } from '../args.js';
import { withEngine } from './jobs.js';

export const setUsage = `Usage: gpushare set JOB [--priority high|normal|best-effort] [--mem SIZE|none]
                    [--suspend | --resume | --terminate] [--json]
  JOB is a job id (j12) or a GPU process (p4242, or just its pid).`;

export async function setCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    priority: { type: 'string' },
    mem: { type: 'string' },
    suspend: { type: 'boolean' },
    resume: { type: 'boolean' },
    terminate: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1) throw new UsageError(`gpushare set takes one job, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}.\n${setUsage}`);
  const job = /^\d+$/.test(positionals[0]) ? `p${positionals[0]}` : positionals[0];
  if (!/^(j|p)\d+$/.test(job)) throw new UsageError(`"${positionals[0]}" is not a job: use an id like j12 or p4242 (see gpushare jobs).`);
  const actions = (['suspend', 'resume', 'terminate'] as const).filter((a) => values[a]);
  if (actions.length > 1) throw new UsageError(`Choose one of --${actions.join(', --')}.`);
  const priority = values.priority;
  if (priority !== undefined && !(PRIORITIES as readonly string[]).includes(priority)) {
    throw new UsageError(`--priority must be one of ${PRIORITIES.join(', ')}; got "${priority}".`);
  }
  let quota: number | null | undefined;
  if (values.mem !== undefined) {
    try {
      quota = values.mem === 'none' ? null : parseByteSize(values.mem);
    } catch (error) {
      throw new UsageError(`--mem: ${(error as Error).message}`);
    }
  }
  if (priority === undefined && quota === undefined && actions.length === 0) throw new UsageError(`Nothing to change.\n${setUsage}`);

  const result = await withEngine(async (engine) => {
    let view: JobView | undefined;
    if (priority !== undefined) view = await engine.call('jobs.setPriority', { job, priority: priority as Priority });
    if (quota !== undefined) view = await engine.call('jobs.setQuota', { job, bytes: quota });
    if (actions[0]) view = await engine.call(`jobs.${actions[0]}`, { job });
    return view!;
  });
  process.stdout.write(values.json ? JSON.stringify(result, null, 2) + '\n' : `${result.id} ${result.state}: ${result.history[result.history.length - 1].reason}\n`);
  return 0;
}
