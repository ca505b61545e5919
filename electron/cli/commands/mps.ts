// `gpushare mps`: the engine's MPS daemons per GPU — start, stop, and whose runs ("MPS held by user NAME").
import type { MpsGpuStatus, MpsSliceStatus } from '../../../shared/spatial.js';
import { parseFlags, UsageError } from '../args.js';
import { checkGpuOnEngine } from '../engine-snapshot.js';
import { withEngine } from './jobs.js';
import { mpsUsage } from '../usage.js';

export async function mpsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError(`Which mps subcommand? status, start or stop.\n${mpsUsage}`);
  if (!['status', 'start', 'stop'].includes(sub)) throw new UsageError(`Unknown mps subcommand "${sub}": status, start or stop.\n${mpsUsage}`);
  const { values, positionals } = parseFlags(rest, { gpu: { type: 'string' }, gi: { type: 'string' }, json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`gpushare mps ${sub} takes no arguments, got "${positionals[0]}".`);
  if (values.gpu !== undefined && !/^\d+$/.test(values.gpu)) throw new UsageError(`--gpu must be a GPU index, got "${values.gpu}".`);
  const gpu = values.gpu === undefined ? undefined : Number(values.gpu);
  if (sub !== 'status' && gpu === undefined) throw new UsageError(`gpushare mps ${sub} needs --gpu N.`);
  if (values.gi !== undefined && (sub !== 'stop' || !/^\d+$/.test(values.gi))) throw new UsageError(sub === 'stop' ? `--gi must be a GPU instance id, got "${values.gi}".` : `--gi is for gpushare mps stop only (a slice's daemon starts with its first job).`);
  const gpuInstanceId = values.gi === undefined ? undefined : Number(values.gi);
  const statuses: MpsGpuStatus[] = await withEngine(async (engine) => {
    if (gpu !== undefined) await checkGpuOnEngine(engine, gpu);
    if (sub === 'start') return [await engine.call('mps.start', { gpu: gpu! })];
    if (sub === 'stop') return [await engine.call('mps.stop', { gpu: gpu!, ...(gpuInstanceId === undefined ? {} : { gpuInstanceId }) })];
    return (await engine.call('mps.status', {})).filter((s) => gpu === undefined || s.gpu === gpu);
  });
  if (values.json) process.stdout.write(JSON.stringify(statuses, null, 2) + '\n');
  else process.stdout.write(mpsStatusLines(statuses).join('\n') + '\n');
  return 0;
}

/** One line per GPU and per slice daemon: its state, what it is, and for ours who started it. */
export function mpsStatusLines(statuses: readonly MpsGpuStatus[]): string[] {
  const line = (s: MpsGpuStatus | MpsSliceStatus, stop: string) => `${s.state.padEnd(4)}  ${s.message}${startedForNote(s, stop)}`;
  return statuses.flatMap((s) => [`GPU ${s.gpu}  ${line(s, `--gpu ${s.gpu}`)}`, ...(s.slices ?? []).map((m) => `  GI ${m.gpuInstanceId}  ${line(m, `--gpu ${m.gpu} --gi ${m.gpuInstanceId}`)}`)]);
}

function startedForNote(s: MpsGpuStatus, stop: string): string {
  if (s.startedFor === 'jobs') return ' Started for jobs: it stops when the last one ends.';
  if (s.startedFor === 'request') return ` Started on request: it runs until \`gpushare mps stop ${stop}\`.`;
  return '';
}
