// `gpushare enrol`'s own flags and the command after them: light, so the command table can tell
// `gpushare enrol -- python --help` (python's) from `gpushare enrol --help` without loading enrol.
import { UsageError } from './usage-error.js';

/** gpushare's own flags (until "--" or the first word that is not one) and the command. */
export function splitEnrolArgs(argv: readonly string[]): { flags: Map<string, string | true>; command: string[] } {
  const flags = new Map<string, string | true>();
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      i++;
      break;
    }
    if (arg === '-h') {
      flags.set('help', true);
      continue;
    }
    if (!arg.startsWith('--')) break;
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (['help', 'keep-resident', 'install'].includes(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value, got "${arg}".`);
      flags.set(name, true);
      continue;
    }
    if (!['priority', 'mem', 'shell'].includes(name)) throw new UsageError(`Unknown option --${name} for gpushare enrol (put the command after --).`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value.`);
    flags.set(name, value);
  }
  return { flags, command: argv.slice(i) };
}
