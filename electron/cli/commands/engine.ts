// `gpushare engine`: your personal engine, headless, on its unix socket only. The desktop app
// runs it in its own process so NVML calls and process control never block the window.
import { POINTED_BOX } from '../../engine/gpu/simulated-box-names.js';
import { openConsoleHost } from '../../engine/console-host.js';
import { DEFAULT_RATE_HZ, checkRate } from '../../engine/sampler/sampler.js';
import { parseFlags, parseRate, UsageError } from '../args.js';
import { engineDefaults } from '../user-settings.js';
import { metricsOption } from '../metrics-option.js';
import { labelSuffix } from '../../engine/gpu/gpu-backend.js';

export async function engineCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { simulate: { type: 'string' }, 'no-demo': { type: 'boolean' }, rate: { type: 'string' }, 'until-stdin-closes': { type: 'boolean' }, metrics: { type: 'string' } },
    { simulate: POINTED_BOX },
  );
  if (positionals.length > 0) throw new UsageError(`gpushare engine takes no arguments, got "${positionals[0]}".`);
  const defaults = engineDefaults(); // the person's config file; a flag wins
  const rateHz = checkRate(parseRate(values.rate, defaults.rateHz ?? DEFAULT_RATE_HZ));
  const metrics = metricsOption(values.metrics ?? defaults.metrics);
  delete process.env.ELECTRON_RUN_AS_NODE; // how the app ran its own binary as Node: not for the jobs this engine starts

  // caught before the socket answers: a stop asked the moment it answers still ends cleanly
  let stop = (): void => undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve());
    if (values['until-stdin-closes']) {
      process.stdin.on('close', () => resolve()).on('end', () => resolve()).on('error', () => resolve());
      process.stdin.resume(); // read (and drop) whatever comes, to hear the end
    }
  });
  const host = await openConsoleHost({ simulate: values.simulate, demo: !values['no-demo'], rateHz, metrics, db: defaults.db, autoParkIdleSeconds: defaults.autoParkIdleSeconds, boxName: defaults.boxName, say: (line) => process.stderr.write(line + '\n') });
  host.engine.setHost({ stop }); // `gpushare stop` (engine.stop) ends it as SIGTERM does
  const simulated = labelSuffix(host.backend.label);
  process.stdout.write(`engine socket: ${host.socketPath}${simulated}\n`);
  await stopped;
  await host.close();
  if (values['until-stdin-closes']) process.stdin.destroy(); // nothing keeps the process alive once the engine is closed
  return 0;
}
