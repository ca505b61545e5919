// `gpushare run`'s own flags and the command after them: light, so the command table can tell
// `gpushare run -- python train.py --help` (python's) from `gpushare run --help` without loading run.
import { UsageError } from './usage-error.js';

const VALUE_FLAGS = new Set(['gpu', 'priority', 'mem', 'request', 'mode', 'mps-share', 'mig-slice', 'wait', 'box']);

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
