// What the prolog reads of a job from Slurm itself (`scontrol show job -d`, `scontrol show node`): the
// prolog does not see SLURM_SHARDS_ON_NODE, and a job's QOS is in no prolog variable.

export interface SlurmJobFacts {
  qos: string | null;
  partition: string | null;
  /** This node's GPU indices for the job (IDX of its gpu, shard or mps gres). */
  gpus: number[];
  shards: number | null;
  mpsPercent: number | null;
}

const NONE = new Set(['(null)', 'N/A', '']);
const field = (text: string, name: string): string | null => {
  const value = new RegExp(`(?:^|\\s)${name}=(\\S*)`).exec(text)?.[1] ?? null;
  return value === null || NONE.has(value) ? null : value;
};

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

/** One gres of a job's node line: "GRES=gpu:1(IDX:0),shard:2(IDX:0)" → count and indices per name. */
function gresOf(text: string): Map<string, { count: number; idx: number[] }> {
  const out = new Map<string, { count: number; idx: number[] }>();
  const gres = /\sGRES=(\S+)/.exec(text)?.[1] ?? '';
  for (const m of gres.matchAll(/(?:^|,)(\w+)(?::[\w.-]+)*?:(\d+)(?:\(IDX:([\d,-]+)\))?/g)) out.set(m[1], { count: Number(m[2]), idx: m[3] ? parseIndexList(m[3]) : [] });
  return out;
}

/** The line Slurm starts with `first=`: a job's name or comment (the user's words, spaces and all) sits on other lines. */
const slurmLine = (lines: string[], first: string): string => lines.find((l) => new RegExp(`^\\s*${first}=`).test(l)) ?? '';

/** `scontrol show job -d ID`'s text, for node `node` (its own "Nodes=… GRES=…" line; the first where none names it). */
export function parseShowJob(text: string, node: string | null): SlurmJobFacts {
  const lines = text.split('\n');
  const nodeLines = lines.filter((l) => /^\s*Nodes=\S+\s/.test(l) && /\sGRES=/.test(l));
  const mine = nodeLines.find((l) => node !== null && expandHostlist(/Nodes=(\S+)/.exec(l)![1]).includes(node)) ?? nodeLines[0] ?? '';
  const gres = gresOf(mine);
  const gpus = [...new Set([...(gres.get('gpu')?.idx ?? []), ...(gres.get('shard')?.idx ?? []), ...(gres.get('mps')?.idx ?? [])])].sort((a, b) => a - b);
  return {
    qos: field(slurmLine(lines, 'Priority'), 'QOS'),
    partition: field(slurmLine(lines, 'Partition'), 'Partition'),
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

/** "n[1-3],gpu7" → ["n1","n2","n3","gpu7"] (one level of brackets, as Slurm prints node lists). */
export function expandHostlist(list: string): string[] {
  const out: string[] = [];
  for (const m of list.matchAll(/([^,[]+)(?:\[([^\]]+)\])?/g)) {
    if (!m[2]) {
      out.push(m[1]);
      continue;
    }
    for (const part of m[2].split(',')) {
      const r = /^(\d+)(?:-(\d+))?$/.exec(part);
      if (!r) continue;
      const width = r[1].length;
      for (let i = Number(r[1]); i <= Number(r[2] ?? r[1]) && out.length < 4096; i++) out.push(m[1] + String(i).padStart(width, '0'));
    }
  }
  return out;
}
