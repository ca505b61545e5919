// `gpushare ps`: every GPU and GPU process, once, as JSON, or refreshed.
import { openGpuBackend, DEFAULT_SCENARIO } from '../../engine/gpu/open-backend.js';
import { checkRate, DEFAULT_RATE_HZ, Sampler } from '../../engine/sampler/sampler.js';
import { parseFlags, parseRate, UsageError } from '../args.js';
import { renderSnapshot } from './ps-render.js';

export const psUsage = `Usage: gpushare ps [--json] [--watch] [--rate HZ] [--simulate [SCENARIO]]
  --json               one snapshot as JSON (for scripts)
  --watch              refresh until Ctrl-C (--rate samples per second, 0.2-10, default 1)
  --simulate [NAME]    use the simulated GPU driver (default scenario ${DEFAULT_SCENARIO})`;

export async function psCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { json: { type: 'boolean' }, watch: { type: 'boolean' }, rate: { type: 'string' }, simulate: { type: 'string' } },
    { simulate: DEFAULT_SCENARIO },
  );
  if (positionals.length > 0) throw new UsageError(`gpushare ps takes no arguments, got "${positionals[0]}".`);
  if (values.json && values.watch) throw new UsageError('--json and --watch cannot be combined.');
  const rateHz = checkRate(parseRate(values.rate, DEFAULT_RATE_HZ));

  const backend = await openGpuBackend({ simulate: values.simulate }).catch((error: Error) => {
    if (values.simulate !== undefined) throw error;
    throw new Error(`${error.message}\nNo NVIDIA driver here? \`gpushare ps --simulate\` shows the simulated GPUs.`);
  });
  try {
    const sampler = new Sampler(backend.nvml, {
      rateHz,
      simulated: backend.simulated !== null,
      scenario: backend.simulated?.scenario ?? null,
    });
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
