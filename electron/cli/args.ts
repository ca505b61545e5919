// Command-line flags: node's parseArgs plus "--simulate [scenario]" with an optional value.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { checkRate } from '../engine/sampler/sampling-rate.js';
import { UsageError } from './usage-error.js';

export { UsageError };

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parse flags strictly; an unknown flag or a missing value is a UsageError naming it. A value that
 * looks like a negative number ("--mem -1G") is taken as the value, so its check can say what is wrong.
 */
export function parseFlags<T extends Options>(argv: string[], options: T, optionalValue: Record<string, string> = {}) {
  const normalised: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i].replace(/^--/, '');
    if (argv[i].startsWith('--') && flag in optionalValue) {
      const next = argv[i + 1];
      const value = next !== undefined && !next.startsWith('-') ? next : optionalValue[flag];
      if (value === next) i++;
      normalised.push(`--${flag}=${value}`);
    } else if (argv[i].startsWith('--') && options[flag]?.type === 'string' && /^-\.?\d/.test(argv[i + 1] ?? '')) {
      normalised.push(`--${flag}=${argv[++i]}`);
    } else {
      normalised.push(argv[i]);
    }
  }
  try {
    return parseArgs({ args: normalised, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Node goes on to explain how to pass "-x" as a positional argument: no gpushare command takes one
    if ((error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`${message.split('. ')[0]}; --help lists the options.`);
    throw new UsageError(message);
  }
}

/** --rate in samples per second, in the sampler's range; a bad one is a usage error. */
export function parseRate(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const hz = Number(text);
  if (!Number.isFinite(hz)) throw new UsageError(`--rate must be a number of samples per second, got "${text}".`);
  try {
    return checkRate(hz);
  } catch (error) {
    throw new UsageError(`--rate: ${(error as Error).message}`);
  }
}
