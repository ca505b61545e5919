// The own flags of a command that runs another (`gpushare run`, `gpushare enrol`) and the command after
// them: light, so the command table can tell `gpushare run -- python train.py --help` (python's) from
// `gpushare run --help` without loading the command's module.
import { MAX_JOB_GPUS } from '../../shared/jobs.js';
import { UsageError } from './usage-error.js';

/** A wrapping command's flags: those that take no value, those that take one, and those that may be given again (each value kept). */
export interface WrapperFlags {
  command: string;
  switches: readonly string[];
  values: readonly string[];
  repeated?: readonly string[];
}

const RUN_FLAGS: WrapperFlags = { command: 'run', switches: ['json', 'help', 'keep-resident'], values: ['gpu', 'gpus', 'priority', 'mem', 'request', 'mode', 'mps-share', 'mig-slice', 'wait', 'box'], repeated: ['env'] };
const ENROL_FLAGS: WrapperFlags = { command: 'enrol', switches: ['help', 'keep-resident', 'install'], values: ['priority', 'mem', 'shell'] };

/** Flags until "--" (or the first word that is not a flag); the rest is the command, untouched. */
export function splitWrapperArgs(argv: readonly string[], known: WrapperFlags): { flags: Map<string, string | true>; lists: Map<string, string[]>; command: string[] } {
  const flags = new Map<string, string | true>();
  const lists = new Map<string, string[]>();
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      i++;
      break;
    }
    if (arg === '-h') {
      flags.set('help', true); // the dispatcher prints the usage; here it only marks where gpushare's own flags end
      continue;
    }
    if (!arg.startsWith('--')) break;
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (known.switches.includes(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value, got "${arg}".`);
      flags.set(name, true);
      continue;
    }
    const repeated = known.repeated?.includes(name) ?? false;
    if (!repeated && !known.values.includes(name)) throw new UsageError(`Unknown option --${name} for gpushare ${known.command} (put the command after --).`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value.`);
    // `--box -- CMD` took the end of gpushare's flags for the value: no value of ours starts with "--"
    if (eq < 0 && value.startsWith('--')) throw new UsageError(`--${name} needs a value, got "${value}".`);
    if (repeated) lists.set(name, [...(lists.get(name) ?? []), value]);
    else flags.set(name, value);
  }
  return { flags, lists, command: argv.slice(i) };
}

export const splitRunArgs = (argv: readonly string[]) => splitWrapperArgs(argv, RUN_FLAGS);
export const splitEnrolArgs = (argv: readonly string[]) => splitWrapperArgs(argv, ENROL_FLAGS);

/** What `gpushare run` asks for its GPUs: one (an index, or "auto"), a count the scheduler picks, or a list in order. */
export interface RunGpus {
  gpu: number | 'auto' | number[];
  gpuCount?: number;
}

/**
 * --gpu N|auto|a,b and --gpus N, checked against each other and against one-GPU modes (an MPS share, a MIG
 * slice): a usage error names the problem. Whether the box has them is checkGpuCountOnBox's.
 */
export function parseRunGpus(flags: { gpu?: string; gpus?: string; mode?: string; mpsShare?: string; migSlice?: string }): RunGpus {
  const gpuText = flags.gpu ?? 'auto';
  if (gpuText !== 'auto' && !/^\d+(,\d+)*$/.test(gpuText)) throw new UsageError(`--gpu must be a GPU index, a list of them (0,2) or "auto", got "${gpuText}".`);
  const named = gpuText === 'auto' ? null : gpuText.split(',').map(Number);
  const twice = named?.find((g, i) => named.indexOf(g) !== i);
  if (twice !== undefined) throw new UsageError(`--gpu ${gpuText} names GPU ${twice} twice: a job runs once on each of its GPUs.`);
  let count: number | null = null;
  if (flags.gpus !== undefined) {
    if (!/^\d+$/.test(flags.gpus)) throw new UsageError(`--gpus must be a whole number of GPUs, got "${flags.gpus}".`);
    count = Number(flags.gpus);
    if (count < 1) throw new UsageError(`--gpus ${flags.gpus}: a job runs on at least 1 GPU.`);
    if (count > MAX_JOB_GPUS) throw new UsageError(`--gpus ${flags.gpus}: a job runs on at most ${MAX_JOB_GPUS} GPUs.`);
    if (named && named.length !== count) throw new UsageError(`--gpu ${gpuText} names ${named.length} GPU${named.length === 1 ? '' : 's'} and --gpus says ${count}: give one of them.`);
  }
  if (named && named.length > MAX_JOB_GPUS) throw new UsageError(`--gpu ${gpuText}: a job runs on at most ${MAX_JOB_GPUS} GPUs.`);
  const several = (named?.length ?? count ?? 1) > 1;
  if (several) {
    const asked = named ? `--gpu ${gpuText}` : `--gpus ${count}`;
    if (flags.migSlice !== undefined || flags.mode === 'mig') throw new UsageError(`--mig-slice runs a job in one MIG slice of one GPU: not with ${asked}.`);
    if (flags.mode === 'mps') throw new UsageError(`--mode mps shares one GPU through MPS: not with ${asked}.`);
    if (flags.mpsShare !== undefined) throw new UsageError(`--mps-share shares one GPU through MPS: not with ${asked}.`);
  }
  if (named) return { gpu: named.length === 1 ? named[0] : named };
  return count !== null && count > 1 ? { gpu: 'auto', gpuCount: count } : { gpu: 'auto' };
}

/** The GPUs asked for exist on a box of `count` GPUs; else a usage error that says how many it has. */
export function checkGpuCountOnBox(count: number, asked: RunGpus): void {
  const gpus = count === 0 ? 'no GPUs' : count === 1 ? 'one GPU, index 0' : `${count} GPUs, indexes 0-${count - 1}`;
  if (asked.gpuCount !== undefined && asked.gpuCount > count) throw new UsageError(`--gpus ${asked.gpuCount}: there ${count === 1 ? 'is only 1 GPU' : `are only ${count} GPUs`} on this box (see gpushare ps).`);
  const named = asked.gpu === 'auto' ? [] : Array.isArray(asked.gpu) ? asked.gpu : [asked.gpu];
  const missing = named.find((g) => g >= count);
  if (missing !== undefined) throw new UsageError(`--gpu ${named.join(',')}: there is no GPU ${missing}; this box has ${gpus} (see gpushare ps).`);
}
