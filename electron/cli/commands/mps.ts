// `gpushare mps`: the engine's MPS daemons per GPU — start, stop, and whose runs ("MPS held by user NAME").
import type { MpsGpuStatus } from '../../../shared/spatial.js';
import { parseFlags, UsageError } from '../args.js';
import { checkGpuOnEngine } from '../engine-snapshot.js';
import { withEngine } from './jobs.js';

export const mpsUsage = `Usage: gpushare mps status|start|stop [--gpu N] [--json]
  status   per GPU: off, ours (the engine's daemon) or held (another user's: one user's MPS per box)
  start    start the engine's MPS control daemon for GPU N (jobs in --mode mps start it themselves)
  stop     stop it (its clients lose their server: stop them first)`;

export async function mpsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError(`Which mps subcommand? status, start or stop.\n${mpsUsage}`);
  if (!['status', 'start', 'stop'].includes(sub)) throw new UsageError(`Unknown mps subcommand "${sub}": status, start or stop.\n${mpsUsage}`);
  const { values, positionals } = parseFlags(rest, { gpu: { type: 'string' }, json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`gpushare mps ${sub} takes no arguments, got "${positionals[0]}".`);
  if (values.gpu !== undefined && !/^\d+$/.test(values.gpu)) throw new UsageError(`--gpu must be a GPU index, got "${values.gpu}".`);
  const gpu = values.gpu === undefined ? undefined : Number(values.gpu);
  if (sub !== 'status' && gpu === undefined) throw new UsageError(`gpushare mps ${sub} needs --gpu N.`);
  const statuses: MpsGpuStatus[] = await withEngine(async (engine) => {
    if (gpu !== undefined) await checkGpuOnEngine(engine, gpu);
    if (sub === 'start') return [await engine.call('mps.start', { gpu: gpu! })];
    if (sub === 'stop') return [await engine.call('mps.stop', { gpu: gpu! })];
    return (await engine.call('mps.status', {})).filter((s) => gpu === undefined || s.gpu === gpu);
  });
  if (values.json) process.stdout.write(JSON.stringify(statuses, null, 2) + '\n');
  else process.stdout.write(statuses.map((s) => `GPU ${s.gpu}  ${s.state.padEnd(4)}  ${s.message}`).join('\n') + '\n');
  return 0;
}
