// `gpushare serve`: the engine headless, with the browser console on loopback.
import { assembleEngine } from '../../engine/assemble-engine.js';
import { personalProfile } from '../../engine/console-host.js';
import { POINTED_BOX } from '../../engine/gpu/simulated-box-names.js';
import { DEFAULT_RATE_HZ, checkRate } from '../../engine/sampler/sampler.js';
import { parseFlags, parseRate, UsageError } from '../args.js';
import { engineDefaults } from '../user-settings.js';
import { metricsOption } from '../metrics-option.js';
import { labelSuffix } from '../../engine/gpu/gpu-backend.js';

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

  const host = await assembleEngine({
    ...personalProfile({ simulate: values.simulate, rateHz, metrics: metricsAddress, db: values.db ?? defaults.db, autoParkIdleSeconds: defaults.autoParkIdleSeconds, boxName: defaults.boxName, web: { port } }),
    demo: false,
    say: (line) => process.stderr.write(line + '\n'),
  });
  const web = host.web!;
  const simulated = labelSuffix(host.backend.label);
  process.stdout.write(`gpushare console: ${web.url}${simulated}\nengine socket: ${host.socketPath}\n${host.metricsUrl ? `metrics: ${host.metricsUrl}\n` : ''}`);

  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    process.once('SIGHUP', stop);
    host.engine.setHost({ stop, consoleUrl: web.url }); // `gpushare stop` (engine.stop) ends it as SIGTERM does
  });
  await host.close(); // the scheduler first: nothing stays suspended; managed jobs keep running
  return 0;
}
