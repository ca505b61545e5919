// What the prolog reads of a job from Slurm itself (`squeue --json`, `scontrol show node`): the prolog does not see
// SLURM_SHARDS_ON_NODE, and a job's QOS is in no prolog variable.
import { isSlurmName } from '../../../shared/slurm.js';

export interface SlurmJobFacts {
  /** The job's user as slurmctld records it. */
  uid: number;
  qos: string | null;
  partition: string | null;
  /** The account it is billed to; null where Slurm names none, or one the daemon would refuse (then accountLeftOut). */
  account: string | null;
  /** Slurm's account where it is not a name the daemon keeps (letters, digits, _ . + -, at most 64): left out, not the job's registration. */
  accountLeftOut?: string;
  /** This node's GPU indices for the job (IDX of its gpu, shard or mps gres). */
  gpus: number[];
  shards: number | null;
  mpsPercent: number | null;
}

const NONE = new Set(['(null)', 'N/A', '']);
const named = (value: unknown): string | null => (typeof value === 'string' && !NONE.has(value) ? value : null);

/** A Slurm client command run as root on the node: its stdout. */
export type SlurmClient = (command: 'scontrol' | 'squeue', args: string[]) => string;

/**
 * What the prolog knows of job `jobId` on `node`, from Slurm's structured output: `squeue --json` escapes every
 * string, so a name or comment holding newlines cannot fake a field, as it could in `scontrol show job`'s text.
 * 22.05 has no `scontrol --json`, and its `squeue --json` ignores -j, listing every job (one load per job start);
 * -j is asked all the same, for releases that honour it, and the job is picked by its id either way.
 */
export function readJobFacts(jobId: string, node: string | null, slurm: SlurmClient): SlurmJobFacts {
  return parseSqueueJson(slurm('squeue', ['--json', '-j', jobId]), jobId, node);
}

/** "0-1,3" → [0, 1, 3]. */
export function parseIndexList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    for (let i = Number(m[1]); i <= Number(m[2] ?? m[1]) && out.length < 64; i++) out.push(i);
  }
  return out;
}

/** One node's gres detail, "gpu:a100:1(IDX:0),shard:2(IDX:0)" → count and indices per name. */
function gresOf(detail: string): Map<string, { count: number; idx: number[] }> {
  const out = new Map<string, { count: number; idx: number[] }>();
  for (const m of detail.matchAll(/(?:^|,)(\w+)(?::[\w.-]+)*?:(\d+)(?:\(IDX:([\d,-]+)\))?/g)) out.set(m[1], { count: Number(m[2]), idx: m[3] ? parseIndexList(m[3]) : [] });
  return out;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `squeue --json`'s text: job `jobId` on `node`. Its gres_detail holds one entry per node of the job, in the order of
 * job_resources.allocated_nodes (the first where none names `node`).
 */
export function parseSqueueJson(text: string, jobId: string, node: string | null): SlurmJobFacts {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new Error(`squeue --json did not print JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const jobs = isRecord(doc) && Array.isArray(doc.jobs) ? doc.jobs : null;
  if (!jobs) throw new Error('squeue --json printed no "jobs" list');
  const job = jobs.find((j): j is Record<string, unknown> => isRecord(j) && String(j.job_id) === jobId);
  if (!job) throw new Error(`squeue --json does not list job ${jobId}`);
  if (typeof job.user_id !== 'number' || !Number.isInteger(job.user_id)) throw new Error(`squeue --json gives job ${jobId} no numeric user_id`);
  const details = Array.isArray(job.gres_detail) ? job.gres_detail.filter((d): d is string => typeof d === 'string') : [];
  const resources = isRecord(job.job_resources) && Array.isArray(job.job_resources.allocated_nodes) ? job.job_resources.allocated_nodes : [];
  const at = node === null ? -1 : resources.findIndex((n) => isRecord(n) && n.nodename === node);
  const gres = gresOf(details[Math.max(0, at)] ?? '');
  const gpus = [...new Set([...(gres.get('gpu')?.idx ?? []), ...(gres.get('shard')?.idx ?? []), ...(gres.get('mps')?.idx ?? [])])].sort((a, b) => a - b);
  const account = named(job.account);
  return {
    uid: job.user_id,
    qos: named(job.qos),
    partition: named(job.partition),
    account: account !== null && isSlurmName(account) ? account : null,
    ...(account !== null && !isSlurmName(account) ? { accountLeftOut: account } : {}),
    gpus,
    shards: gres.get('shard')?.count ?? null,
    mpsPercent: gres.get('mps') ? Math.min(100, gres.get('mps')!.count) : null,
  };
}

/** Shards configured per GPU on a node (`scontrol show node NAME`'s "Gres=gpu:2,shard:8" → 4); null: no shards. */
export function parseShardsPerGpu(text: string): number | null {
  const gres = /(?:^|\s)Gres=(\S+)/.exec(text)?.[1] ?? '';
  let gpus = 0;
  let shards = 0;
  for (const m of gres.matchAll(/(?:^|,)(\w+)(?::[\w.-]+)*?:(\d+)/g)) {
    if (m[1] === 'gpu') gpus += Number(m[2]);
    if (m[1] === 'shard') shards += Number(m[2]);
  }
  return gpus > 0 && shards > 0 ? Math.max(1, Math.floor(shards / gpus)) : null;
}
