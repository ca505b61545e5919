// `gpushare set`: change a job's priority or quota, and suspend, resume, park or unpark it, in one
// lane move (all or nothing); or terminate it. Then it prints the job's state.
import { FINAL_STATES, PRIORITIES, mpsPriorityNote, parseByteSize, type JobView, type Priority } from '../../../shared/jobs.js';
import { parseFlags, UsageError } from '../args.js';
import type { EngineClient } from '../engine-client.js';
import { formatBytes } from '../format.js';
import { JobWatch, PASSING_STATES } from '../job-watch.js';
import { engineOn } from './jobs.js';
import { setUsage } from '../usage.js';

const ACTIONS = ['suspend', 'resume', 'park', 'unpark', 'terminate'] as const;
const DEFAULT_WAIT_S = 10;

export async function setCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    priority: { type: 'string' },
    mem: { type: 'string' },
    suspend: { type: 'boolean' },
    resume: { type: 'boolean' },
    park: { type: 'boolean' },
    unpark: { type: 'boolean' },
    terminate: { type: 'boolean' },
    wait: { type: 'string' },
    json: { type: 'boolean' },
    box: { type: 'string' },
  });
  if (positionals.length !== 1) throw new UsageError(`gpushare set takes one job, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}.\n${setUsage}`);
  const job = /^\d+$/.test(positionals[0]) ? `p${positionals[0]}` : positionals[0];
  if (!/^(j|p)\d+$/.test(job)) throw new UsageError(`"${positionals[0]}" is not a job: use an id like j12 or p4242 (see gpushare jobs).`);
  const actions = ACTIONS.filter((a) => values[a]);
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
  const waitText = values.wait ?? String(DEFAULT_WAIT_S);
  if (!/^\d+(\.\d+)?$/.test(waitText)) throw new UsageError(`--wait must be a number of seconds, got "${waitText}".`);
  const waitMs = Number(waitText) * 1000;
  if (priority === undefined && quota === undefined && actions.length === 0) throw new UsageError(`Nothing to change.\n${setUsage}`);

  const action = actions[0];
  if (action === 'terminate' && (priority !== undefined || quota !== undefined)) throw new UsageError('--terminate ends the job: give it without other changes.');
  const settings = [
    ...(priority === undefined ? [] : [`priority ${priority}`]),
    ...(quota === undefined ? [] : [quota === null ? 'no memory quota' : `memory quota ${formatBytes(quota)}`]),
  ].join(', ');
  // every change in one request: the engine applies them all or, refusing one, none
  const change = (engine: EngineClient): Promise<JobView> =>
    action === 'terminate'
      ? engine.call('jobs.terminate', { job })
      : engine.call('jobs.move', { job, ...(priority === undefined ? {} : { priority: priority as Priority }), ...(quota === undefined ? {} : { memoryQuotaBytes: quota }), ...(action ? { action } : {}) });

  let unfinished = false;
  const box = values.box;
  await engineOn(box)(async (engine) => {
    const watch = new JobWatch(engine);
    try {
      const before = await engine.call('jobs.list', { includeFinished: true }).then((list) => list.find((j) => j.id === job));
      let view = await change(engine);
      // a park or unpark takes a moment: say where it ended up, not that it began
      if (PASSING_STATES.has(view.state) && view.state !== 'queued') view = (await watch.follow(view, { waitMs, runningMs: 0 })).job;
      // a terminate is a signal: say how the job ended, not that it still runs
      if (action === 'terminate' && !FINAL_STATES.has(view.state)) view = (await watch.follow(view, { waitMs, runningMs: waitMs })).job;
      const ending = action === 'terminate' && !FINAL_STATES.has(view.state);
      const line = ending ? `${view.id} ${view.state}${box === undefined ? '' : ` on ${box}`}: asked to end, still ${view.state} after ${waitText} s (see gpushare jobs${box === undefined ? '' : ` --box ${box}`})` : stateLine(view, settings, action ?? null, before, box);
      process.stdout.write(values.json ? JSON.stringify(view, null, 2) + '\n' : `${line}\n`);
      if (ending) unfinished = true;
      const note = priority !== undefined && !values.json ? mpsPriorityNote(view) : null;
      if (note) process.stdout.write(`${box === undefined ? '' : `${box}: `}${note}\n`);
      if (PASSING_STATES.has(view.state) && view.state !== 'queued') unfinished = true;
    } finally {
      watch.close();
    }
  });
  return unfinished ? 1 : 0; // a script that asked for a park must not take "still parking" for done
}

/**
 * "j3 suspended: suspended by alice", with settings changed beside it "j3 suspended: suspended by alice
 * (priority best-effort set)", or for a move that changed no state, "j3 running (priority best-effort set)".
 * A job on another box (--box box2) says so: "j3 suspended on box2: …".
 */
export function stateLine(view: JobView, settings: string, action: string | null, before: JobView | undefined, box?: string): string {
  const last = view.history[view.history.length - 1];
  const moved = !before || view.history.length > before.history.length;
  const job = `${view.id} ${view.state}${box === undefined ? '' : ` on ${box}`}`;
  if (PASSING_STATES.has(view.state) && view.state !== 'queued') return `${job}: ${last.reason} (still in progress; see gpushare jobs${box === undefined ? '' : ` --box ${box}`})`;
  // the state line says what the action did; settings changed with it are named after it
  if (moved) return `${job}: ${last.reason}${settings && action ? ` (${settings} set)` : ''}`;
  return `${job} (${settings || action} set)`;
}
