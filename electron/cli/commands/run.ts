// `gpushare run`: submit a command as a managed job to the running engine.
import { PRIORITIES, SHARING_MODES, parseByteSize, type Priority, type SharingMode } from '../../../shared/jobs.js';
import { UsageError } from '../args.js';
import { checkGpuOnEngine } from '../engine-snapshot.js';
import { engineDefaults } from '../user-settings.js';
import { describeOutcome, JobWatch } from '../job-watch.js';
import { withEngine } from './jobs.js';
import type { EngineClient } from '../engine-client.js';

/** withEngine for one box of the lab list: its link loaded only when asked for; its refusals name the box. */
const withBox =
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

export const runUsage = `Usage: gpushare run [--gpu N|auto] [--priority high|normal|best-effort] [--mem SIZE]
                    [--request SIZE] [--mode shared|exclusive|mps|mig] [--mps-share PCT]
                    [--mig-slice MIG-UUID] [--keep-resident] [--wait SECONDS] [--box NAME] [--json] -- COMMAND [ARGS…]
  Starts COMMAND (no shell) as a managed job: on its GPU (default auto: the one with the most
  free memory), under the launch gate with a hard memory quota (--mem 20G), once its GPU has
  --request (default: the quota) free. Output goes to the job's log file.
  Then follows it for up to --wait seconds (default 1) and says what it came to: running, queued
  and what it waits for, or failed (exit status 1 when it failed or could not start).
  --mode mps runs it as an MPS client with --mps-share percent of the SMs (its --mem becomes the
  pinned memory limit); --mig-slice (mode mig) runs it in one MIG slice (see gpushare mig layout),
  with --mps-share sharing the slice through the slice's own MPS daemon (percent of its SMs).
  --keep-resident: never park it to give its memory to another job while it is idle.
  SIZE like 20G (20 GiB: K, M, G, T are powers of 1024). Without --priority: engine.defaultPriority
  in $XDG_CONFIG_HOME/gpushare/config.json, else normal.
  --box NAME: on that box of the lab list (see gpushare lab), as you there, in the same working
  directory (refused when it does not exist there) and with your environment.`;

const VALUE_FLAGS = new Set(['gpu', 'priority', 'mem', 'request', 'mode', 'mps-share', 'mig-slice', 'wait', 'box']);
const DEFAULT_WAIT_S = 1;
const MAX_WAIT_S = 600;

/** Flags until "--" (or the first word that is not a flag); the rest is the command, untouched. */
export function splitRunArgs(argv: readonly string[]): { flags: Map<string, string | true>; command: string[] } {
  const flags = new Map<string, string | true>();
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
    if (name === 'json' || name === 'help' || name === 'keep-resident') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value, got "${arg}".`);
      flags.set(name, true);
      continue;
    }
    if (!VALUE_FLAGS.has(name)) throw new UsageError(`Unknown option --${name} for gpushare run (put the command after --).`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value.`);
    flags.set(name, value);
  }
  return { flags, command: argv.slice(i) };
}

export async function runCommand(argv: string[]): Promise<number> {
  const { flags, command } = splitRunArgs(argv);
  if (command.length === 0) throw new UsageError('Which command? Give it after --, e.g. gpushare run --gpu 0 -- python train.py');
  const text = (name: string): string | undefined => (typeof flags.get(name) === 'string' ? (flags.get(name) as string) : undefined);
  const gpuText = text('gpu') ?? 'auto';
  if (gpuText !== 'auto' && !/^\d+$/.test(gpuText)) throw new UsageError(`--gpu must be a GPU index or "auto", got "${gpuText}".`);
  const priority = text('priority') ?? engineDefaults().defaultPriority; // the person's config file; --priority wins
  if (priority !== undefined && !(PRIORITIES as readonly string[]).includes(priority)) {
    throw new UsageError(`--priority must be one of ${PRIORITIES.join(', ')}; got "${priority}".`);
  }
  const mode = text('mode') ?? (text('mig-slice') !== undefined ? 'mig' : undefined); // a slice says the mode
  if (mode !== undefined && !(SHARING_MODES as readonly string[]).includes(mode)) throw new UsageError(`--mode must be one of ${SHARING_MODES.join(', ')}, got "${mode}".`);
  const waitText = text('wait') ?? String(DEFAULT_WAIT_S);
  const waitS = Number(waitText);
  if (!/^\d+(\.\d+)?$/.test(waitText) || waitS > MAX_WAIT_S) throw new UsageError(`--wait must be a number of seconds from 0 to ${MAX_WAIT_S}, got "${waitText}".`);
  const shareText = text('mps-share');
  if (shareText !== undefined && !/^\d+$/.test(shareText)) throw new UsageError(`--mps-share must be a whole percentage from 1 to 100, got "${shareText}".`);
  const size = (name: string): number | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    try {
      return parseByteSize(value);
    } catch (error) {
      throw new UsageError(`--${name}: ${(error as Error).message}`);
    }
  };
  const params = {
    argv: command,
    cwd: process.cwd(),
    gpu: gpuText === 'auto' ? ('auto' as const) : Number(gpuText),
    priority: priority as Priority | undefined,
    memoryQuotaBytes: size('mem'),
    memoryRequestBytes: size('request'),
    mode: mode as SharingMode | undefined,
    mpsSharePercent: shareText === undefined ? undefined : Number(shareText),
    migSlice: text('mig-slice'),
    keepResident: flags.get('keep-resident') === true ? true : undefined,
    env: Object.entries(process.env).filter(([k, v]) => v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)).map(([k, v]) => `${k}=${v}`),
  };
  const box = text('box');
  const onEngine = box === undefined ? withEngine : withBox(box);
  const outcome = await onEngine(async (engine) => {
    const watch = new JobWatch(engine); // before submitting: its first changes are not missed
    try {
      if (params.gpu !== 'auto') await checkGpuOnEngine(engine, params.gpu);
      const submitted = await engine.call('jobs.submit', params);
      return await watch.follow(submitted, { waitMs: waitS * 1000, runningMs: waitS * 1000 });
    } finally {
      watch.close();
    }
  });
  const failed = outcome.job.state === 'failed' || outcome.job.state === 'lost';
  if (flags.get('json')) process.stdout.write(JSON.stringify(outcome.job, null, 2) + '\n');
  else process.stdout.write(`${describeOutcome(outcome)}\nlog: ${outcome.job.logPath}\n`);
  return failed ? 1 : 0;
}
