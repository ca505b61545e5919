// `gpushare serve`: the engine headless, with the browser console on loopback.
import { Engine } from '../../engine/engine.js';
import { otherEnginesWarning, otherUsersEngines } from '../../engine/other-engines.js';
import { openGpuBackend } from '../../engine/gpu/open-backend.js';
import { POINTED_BOX } from '../../engine/gpu/simulated-box-names.js';
import { attachScheduler } from '../../engine/scheduler/attach.js';
import { listenOnSocket, refuseBesideRunningEngine } from '../../engine/server/socket-server.js';
import { listenOnLoopback } from '../../engine/server/web-server.js';
import { DEFAULT_RATE_HZ, checkRate } from '../../engine/sampler/sampler.js';
import { attachUsageStore } from '../../engine/store/attach.js';
import { openEngineStores } from '../../engine/store/engine-stores.js';
import { defaultUsageDbPath } from '../../engine/store/usage-store.js';
import { ownerConfigFile, registerSettingsCommands } from '../../engine/settings/settings-commands.js';
import { keepStoreOwnerOnly } from '../../engine/store/owner-only.js';
import { parseFlags, parseRate, UsageError } from '../args.js';
import { engineDefaults } from '../user-settings.js';
import { attachMetrics } from '../../engine/metrics/attach-metrics.js';
import { METRICS_USAGE, metricsOption } from '../metrics-option.js';

export const serveUsage = `Usage: gpushare serve [--port N] [--rate HZ] [--simulate [SCENARIO]] [--db PATH] [--metrics [ADDR:]PORT]
  Runs the engine and serves the browser console on 127.0.0.1 (a random port unless --port),
  printing a URL with a one-time token. Falls back to simulated GPUs when no NVIDIA driver is found.
  Records usage in --db (default $XDG_DATA_HOME/gpushare/usage.db) for \`gpushare report\`.
  ${METRICS_USAGE}
  Defaults for --rate, --db and --metrics: engine.* in $XDG_CONFIG_HOME/gpushare/config.json (a flag wins).`;

export async function serveCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { port: { type: 'string' }, rate: { type: 'string' }, simulate: { type: 'string' }, db: { type: 'string' }, metrics: { type: 'string' } },
    { simulate: POINTED_BOX },
  );
  if (positionals.length > 0) throw new UsageError(`gpushare serve takes no arguments, got "${positionals[0]}".`);
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (0-65535), got "${values.port}".`);
  const defaults = engineDefaults(); // the person's config file; a flag wins
  const rateHz = checkRate(parseRate(values.rate, defaults.rateHz ?? DEFAULT_RATE_HZ));
  const metricsAddress = metricsOption(values.metrics ?? defaults.metrics);

  await refuseBesideRunningEngine(); // its suspended pids are not ours to resume
  const backend = await openGpuBackend({
    simulate: values.simulate,
    fallBackToSimulated: true,
    onFallback: (reason) => process.stderr.write(`No NVIDIA driver found (${reason.split('\n')[0]}). Using simulated GPUs.\n`),
  });
  const engine = new Engine(backend, { rateHz });
  // a database that cannot be opened is said (stderr, status, the console), not a reason to stop
  const dbPath = values.db ?? defaults.db ?? defaultUsageDbPath();
  keepStoreOwnerOnly(dbPath);
  const { store, jobStore } = await openEngineStores(dbPath, (line) => process.stderr.write(`gpushare: ${line}\n`));
  const others = otherEnginesWarning(otherUsersEngines(engine.owner.uid));
  if (others) process.stderr.write(others + '\n');
  const autoPark = defaults.autoParkIdleSeconds ? { idleMs: defaults.autoParkIdleSeconds * 1000 } : null; // idle jobs' memory for queued jobs
  const scheduler = attachScheduler(engine, { jobStore: jobStore ?? undefined, autoPark }); // managed jobs outlive this engine: the next one re-adopts them
  attachUsageStore(engine, store, { ownership: scheduler.scheduler.ownership, jobStore }); // a job's child processes are the job's
  if (scheduler.gateMissing) process.stderr.write(`Launch gate off: ${scheduler.gateMissing}.\n`);
  registerSettingsCommands(engine.dispatcher, ownerConfigFile(engine.owner.uid)); // the console keeps its choices in your config
  const metrics = metricsAddress ? await attachMetrics(engine, scheduler.scheduler, metricsAddress) : null; // a port in use stops the start
  const socket = await listenOnSocket(engine); // last: the socket answers once every command is there
  const web = await listenOnLoopback(engine, { port });
  engine.start();
  const simulated = backend.simulated ? ` — SIMULATED GPUs (scenario ${backend.simulated.scenario})` : '';
  process.stdout.write(`gpushare console: ${web.url}${simulated}\nengine socket: ${socket.path}\n${metrics ? `metrics: ${metrics.url}\n` : ''}`);

  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    process.once('SIGHUP', stop);
    engine.setHost({ stop, consoleUrl: web.url }); // `gpushare stop` (engine.stop) ends it as SIGTERM does
  });
  const stillParked = await scheduler.stop(); // before anything else: nothing stays suspended; managed jobs keep running
  if (stillParked.length > 0) process.stderr.write(`Still parked (no room on their GPU to restore them): ${stillParked.join(', ')}. The next engine shows them.\n`);
  engine.stop();
  await Promise.all([web.close(), socket.close(), jobStore?.close(), metrics?.close()]);
  await store.close();
  backend.close();
  return 0;
}
