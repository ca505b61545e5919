// The own flags of a command that runs another (`gpushare run`, `gpushare enrol`) and the command after
// them: light, so the command table can tell `gpushare run -- python train.py --help` (python's) from
// `gpushare run --help` without loading the command's module.
import { UsageError } from './usage-error.js';

/** A wrapping command's flags: those that take no value, those that take one, and those that may be given again (each value kept). */
export interface WrapperFlags {
  command: string;
  switches: readonly string[];
  values: readonly string[];
  repeated?: readonly string[];
}

const RUN_FLAGS: WrapperFlags = { command: 'run', switches: ['json', 'help', 'keep-resident'], values: ['gpu', 'priority', 'mem', 'request', 'mode', 'mps-share', 'mig-slice', 'wait', 'box'], repeated: ['env'] };
const ENROL_FLAGS: WrapperFlags = { command: 'enrol', switches: ['help', 'keep-resident', 'install'], values: ['priority', 'mem', 'shell'] };

/** Flags until "--" (or the first word that is not a flag); the rest is the command, untouched. */
export function splitWrapperArgs(argv: readonly string[], known: WrapperFlags): { flags: Map<string, string | true>; lists: Map<string, string[]>; command: string[] } {
  const flags = new Map<string, string | true>();
  const lists = new Map<string, string[]>();
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
    if (known.switches.includes(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value, got "${arg}".`);
      flags.set(name, true);
      continue;
    }
    const repeated = known.repeated?.includes(name) ?? false;
    if (!repeated && !known.values.includes(name)) throw new UsageError(`Unknown option --${name} for gpushare ${known.command} (put the command after --).`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value.`);
    // `--box -- CMD` took the end of gpushare's flags for the value: no value of ours starts with "--"
    if (eq < 0 && value.startsWith('--')) throw new UsageError(`--${name} needs a value, got "${value}".`);
    if (repeated) lists.set(name, [...(lists.get(name) ?? []), value]);
    else flags.set(name, value);
  }
  return { flags, lists, command: argv.slice(i) };
}

export const splitRunArgs = (argv: readonly string[]) => splitWrapperArgs(argv, RUN_FLAGS);
export const splitEnrolArgs = (argv: readonly string[]) => splitWrapperArgs(argv, ENROL_FLAGS);
