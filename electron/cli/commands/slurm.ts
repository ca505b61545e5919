// `gpushare slurm prolog|epilog|task-prolog`: what slurm.conf's Prolog=, Epilog= and TaskProlog= run.
// The prolog registers the job Slurm placed on this node with the box daemon; the task prolog loads the
// preload library into the job's tasks so they enrol; the epilog ends the job and writes its usage.
// gpushare's trouble never fails a Slurm job or drains a node: each logs why and exits 0, unless --strict.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { preloadLibraryPath } from '../../engine/gate/launch-gate.js';
import { parseFlags, UsageError } from '../args.js';
import { callWithin, connectToEngine, daemonSocketPath } from '../engine-client.js';
import { parseShardsPerGpu, parseIndexList, readJobFacts } from './slurm-scontrol.js';

export { SLURM_LOG, slurmUsage } from '../usage.js';
import { SLURM_LOG } from '../usage.js';

function logLine(file: string, line: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
    appendFileSync(file, `${new Date().toISOString()} ${line}\n`, { mode: 0o640 });
  } catch {
    process.stderr.write(`${line}\n`); // slurmd keeps a prolog's stderr in its own log
  }
}

function slurmClient(command: 'scontrol' | 'squeue', args: string[]): string {
  return execFileSync(command, args, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
}

export async function slurmCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { strict: { type: 'boolean' }, log: { type: 'string' } });
  const [what, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`gpushare slurm ${what} takes no arguments, got "${rest[0]}".`);
  const env = process.env;
  if (what === 'task-prolog') return taskProlog(env, { timeoutMs: 5000 });
  if (what !== 'prolog' && what !== 'epilog') throw new UsageError(`gpushare slurm: say prolog, epilog or task-prolog${what ? `, not "${what}"` : ''}.`);
  const log = values.log ?? env.GPUSHARE_SLURM_LOG ?? SLURM_LOG;
  const jobId = env.SLURM_JOB_ID ?? env.SLURM_JOBID;
  const say = (line: string): void => logLine(log, `${what} job ${jobId ?? '?'}: ${line}`);
  try {
    if (!jobId || !/^\d+$/.test(jobId)) throw new Error('SLURM_JOB_ID is not set: run by slurmd as Prolog=/Epilog= only');
    const engine = await connectToEngine(daemonSocketPath());
    try {
      if (what === 'prolog') {
        const node = env.SLURMD_NODENAME ?? null;
        const job = readJobFacts(jobId, node, slurmClient);
        if (String(job.uid) !== env.SLURM_JOB_UID) throw new Error(`Slurm records job ${jobId} for uid ${job.uid}, slurmd runs its prolog for uid ${env.SLURM_JOB_UID ?? '(unset)'}`);
        const shardsPerGpu = job.shards !== null && node ? parseShardsPerGpu(slurmClient('scontrol', ['show', 'node', node])) : null;
        const fromEnv = parseIndexList(env.SLURM_JOB_GPUS ?? env.CUDA_VISIBLE_DEVICES ?? '');
        const view = await callWithin(engine, 'slurm.prolog', {
          jobId,
          uid: job.uid,
          gpus: job.gpus.length > 0 ? job.gpus : fromEnv,
          shards: job.shards,
          shardsPerGpu,
          mpsPercent: job.mpsPercent,
          qos: job.qos,
          account: job.account,
          partition: job.partition ?? env.SLURM_JOB_PARTITION ?? null,
          node,
        });
        const mps = view.mps === null ? '' : view.mps.started ? `, MPS client at ${view.mpsPercent} % of the GPU's SMs (gres/mps)` : `, gres/mps ${view.mpsPercent} % recorded but its tasks run without MPS: ${view.mps.why}`;
        if (job.accountLeftOut !== undefined) say(`account ${JSON.stringify(job.accountLeftOut.slice(0, 80))} is not a Slurm name gpushare keeps (letters, digits, _ . + -, at most 64): its usage row names no account`);
        say(`registered for ${view.user}${view.account ? ` (account ${view.account})` : ''}: GPU ${view.gpus.join(',') || 'none'}, ${view.memoryQuotaBytes === null ? 'no memory quota' : `memory quota ${view.memoryQuotaBytes} bytes (${job.shards} of ${shardsPerGpu} shards)`}, lane ${view.lane} (${view.laneFrom})${mps}`);
      } else {
        const result = await callWithin(engine, 'slurm.epilog', { jobId });
        say(`usage ${JSON.stringify({ jobId, jobs: result.jobs, ...result.usage, released: result.released })}`);
        for (const p of result.leftOnGpu) say(`pid ${p.pid} of the job is still on GPU ${p.gpu} after its end`);
        if (result.mpsFailure) say(`its GPU's MPS daemon, no longer used, could not be stopped: ${result.mpsFailure}`);
      }
    } finally {
      engine.close();
    }
    return 0;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    say(`${what === 'prolog' ? 'not managed by gpushare, runs as Slurm started it' : 'not settled by gpushare'}: ${why}`);
    return values.strict ? 1 : 0;
  }
}

/** The lines slurmstepd applies to each task's environment: the preload library, and (gres/mps) the job's MPS client variables. */
async function taskProlog(env: NodeJS.ProcessEnv, options: { timeoutMs: number }): Promise<number> {
  const library = preloadLibraryPath();
  let boxWide = false;
  try {
    boxWide = readFileSync('/etc/ld.so.preload', 'utf8').includes('libgpushare-preload.so');
  } catch {
    // no box-wide preload
  }
  if (!boxWide && !(env.LD_PRELOAD ?? '').split(/[: ]/).includes(library)) process.stdout.write(`export LD_PRELOAD=${[library, env.LD_PRELOAD].filter(Boolean).join(':')}\n`);
  if (env.GPUSHARE_DAEMON_SOCKET) process.stdout.write(`export GPUSHARE_DAEMON_SOCKET=${env.GPUSHARE_DAEMON_SOCKET}\n`);
  process.stdout.write('export GPUSHARE_ENROL_WAIT_MS=2000\n'); // the daemon may ask slurmd (scontrol pidinfo) which job a task is
  for (const line of await mpsClientLines(options.timeoutMs)) process.stdout.write(`${line}\n`);
  return 0;
}

/**
 * The daemon's word on the Slurm job this process is in (it asks the kernel, not SLURM_JOB_ID): where the job holds
 * gres/mps, the MPS client variables of its GPU's daemon. Nothing when it answers none, or does not answer: the task
 * then runs as Slurm started it (a task prolog never fails a task).
 */
async function mpsClientLines(timeoutMs: number): Promise<string[]> {
  try {
    const engine = await connectToEngine(daemonSocketPath());
    try {
      const { env } = await callWithin(engine, 'slurm.taskEnv', {}, timeoutMs);
      return Object.entries(env)
        .filter(([name, value]) => /^CUDA_MPS_[A-Z_]+$/.test(name) && !/[\n\r]/.test(value))
        .map(([name, value]) => `export ${name}=${value}`);
    } finally {
      engine.close();
    }
  } catch {
    return [];
  }
}
