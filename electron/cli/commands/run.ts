// `gpushare run`: submit a command as a managed job to the running engine.
import { PRIORITIES, SHARING_MODES, parseByteSize, type Priority, type SharingMode } from '../../../shared/jobs.js';
import { UsageError } from '../args.js';
import { checkGpuCountOnBox, parseRunGpus, splitRunArgs } from '../run-args.js';
import { namedEnv, sentEnv } from '../job-env-flags.js';
import { latestSnapshot } from '../engine-snapshot.js';
import { engineDefaults } from '../user-settings.js';
import { describeOutcome, JobWatch } from '../job-watch.js';
import { engineOn } from './jobs.js';

/** Where the job runs: this shell's folder, which may have been removed under it (process.cwd() then says only "uv_cwd"). */
function workingDirectory(): string {
  try {
    return process.cwd();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('the working directory here no longer exists (it was removed): cd to one that does, then run it again.');
    throw error;
  }
}

const DEFAULT_WAIT_S = 1;
const MAX_WAIT_S = 600;

export async function runCommand(argv: string[]): Promise<number> {
  const { flags, lists, command } = splitRunArgs(argv);
  if (command.length === 0) throw new UsageError('Which command? Give it after --, e.g. gpushare run --gpu 0 -- python train.py');
  const text = (name: string): string | undefined => (typeof flags.get(name) === 'string' ? (flags.get(name) as string) : undefined);
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
  const gpus = parseRunGpus({ gpu: text('gpu'), gpus: text('gpus'), mode, mpsShare: shareText, migSlice: text('mig-slice') });
  const size = (name: string): number | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    try {
      return parseByteSize(value);
    } catch (error) {
      throw new UsageError(`--${name}: ${(error as Error).message}`);
    }
  };
  const box = text('box');
  const named = namedEnv(lists.get('env') ?? [], process.env);
  const params = {
    argv: command,
    cwd: workingDirectory(),
    ...gpus,
    priority: priority as Priority | undefined,
    memoryQuotaBytes: size('mem'),
    memoryRequestBytes: size('request'),
    mode: mode as SharingMode | undefined,
    mpsSharePercent: shareText === undefined ? undefined : Number(shareText),
    migSlice: text('mig-slice'),
    keepResident: flags.get('keep-resident') === true ? true : undefined,
    // another box gets its own login environment for you, as ssh gives: this one's PATH, HOME, VIRTUAL_ENV… are wrong there
    env: sentEnv(process.env, named, box !== undefined),
    ...(box === undefined ? {} : { loginEnv: true }),
  };
  const outcome = await engineOn(box)(async (engine) => {
    const watch = new JobWatch(engine); // before submitting: its first changes are not missed
    try {
      if (params.gpu !== 'auto' || params.gpuCount !== undefined) checkGpuCountOnBox((await latestSnapshot(engine)).gpus.length, gpus);
      const submitted = await engine.call('jobs.submit', params).catch((error: unknown) => {
        // a box not yet updated: never fall back to sending this shell's environment there
        if (box !== undefined && error instanceof Error && /\bloginEnv\b.*not a known field/.test(error.message))
          throw new Error(`its gpushare daemon is older than this gpushare and cannot start a job in ${box}'s own login environment, so nothing was started: update gpushare on ${box}.`);
        throw error;
      });
      return await watch.follow(submitted, { waitMs: waitS * 1000, runningMs: waitS * 1000 });
    } finally {
      watch.close();
    }
  });
  const failed = outcome.job.state === 'failed' || outcome.job.state === 'lost';
  if (flags.get('json')) process.stdout.write(JSON.stringify(outcome.job, null, 2) + '\n');
  else process.stdout.write(`${describeOutcome(outcome, box)}\nlog${box === undefined ? '' : ` (on ${box})`}: ${outcome.job.logPath}\n`);
  return failed ? 1 : 0;
}
