// `gpushare ps`: every GPU and GPU process, once, as JSON, or refreshed: the running engine's view
// when one answers (it may be on simulated GPUs), else straight from the driver.
import { POINTED_BOX } from '../../engine/gpu/simulated-box-names.js';
import { checkRate, DEFAULT_RATE_HZ } from '../../engine/sampler/sampling-rate.js';
import { parseFlags, parseRate, UsageError } from '../args.js';
import { EngineUnavailableError, findEngine, type EngineClient } from '../engine-client.js';
import { latestSnapshot } from '../engine-snapshot.js';
import { renderSnapshot } from './ps-render.js';

export async function psCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { json: { type: 'boolean' }, watch: { type: 'boolean' }, rate: { type: 'string' }, simulate: { type: 'string' } },
    { simulate: POINTED_BOX },
  );
  if (positionals.length > 0) throw new UsageError(`gpushare ps takes no arguments, got "${positionals[0]}".`);
  if (values.json && values.watch) throw new UsageError('--json and --watch cannot be combined.');
  const rateHz = checkRate(parseRate(values.rate, DEFAULT_RATE_HZ));

  if (values.simulate === undefined) {
    const engine = await findEngine().then(
      (found) => found.client,
      (error: unknown) => {
        if (error instanceof EngineUnavailableError) return null;
        throw error;
      },
    );
    if (engine) return psFromEngine(engine, { json: values.json ?? false, watch: values.watch ?? false });
  }

  // the driver and the sampler only where no engine answers: asking an engine loads neither
  const [{ openGpuBackend }, { Sampler }] = await Promise.all([import('../../engine/gpu/open-backend.js'), import('../../engine/sampler/sampler.js')]);
  const backend = await openGpuBackend({ simulate: values.simulate }).catch((error: Error) => {
    if (values.simulate !== undefined) throw error;
    throw new Error(`${error.message}\nNo NVIDIA driver here? \`gpushare ps --simulate\` shows the simulated GPUs.`);
  });
  try {
    const sampler = new Sampler(backend.nvml, { rateHz, ...backend.label });
    if (!values.watch) {
      const snapshot = sampler.tick();
      process.stdout.write(values.json ? JSON.stringify(snapshot, null, 2) + '\n' : renderSnapshot(snapshot, terminalWidth()) + '\n');
      return 0;
    }
    await new Promise<void>((resolve) => {
      sampler.onSnapshot((snapshot) => {
        process.stdout.write('\x1b[2J\x1b[H' + renderSnapshot(snapshot, terminalWidth()) + '\n\nCtrl-C to quit.\n');
      });
      process.once('SIGINT', () => {
        sampler.stop();
        resolve();
      });
      sampler.start();
    });
    return 0;
  } finally {
    backend.close();
  }
}

const terminalWidth = (): number => process.stdout.columns || 160;

async function psFromEngine(engine: EngineClient, options: { json: boolean; watch: boolean }): Promise<number> {
  try {
    if (!options.watch) {
      const snapshot = await latestSnapshot(engine);
      process.stdout.write(options.json ? JSON.stringify(snapshot, null, 2) + '\n' : renderSnapshot(snapshot, terminalWidth()) + '\n');
      return 0;
    }
    await new Promise<void>((resolve) => {
      engine.on('snapshot', (snapshot) => {
        process.stdout.write('\x1b[2J\x1b[H' + renderSnapshot(snapshot, terminalWidth()) + '\n\nCtrl-C to quit.\n');
      });
      process.once('SIGINT', () => resolve());
    });
    return 0;
  } finally {
    engine.close();
  }
}
