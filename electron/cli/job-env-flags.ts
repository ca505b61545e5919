// The environment `gpushare run` sends with a job. On this box: the caller's whole environment, as
// always. On another box (--box): only what ssh would carry there, the rest being the box's own login
// environment for the person (the daemon builds it from that box's passwd), plus what --env names.
import { ENGINE_ONLY_ENV } from '../engine/scheduler/job-env.js';
import { UsageError } from './usage-error.js';

/** What ssh carries to another box by default: Debian's ssh_config SendEnv (LANG LC_* COLORTERM NO_COLOR), the terminal's TERM, and TZ. */
export const CARRIED_TO_BOX = /^(LANG|LC_[A-Z_]+|TERM|COLORTERM|NO_COLOR|TZ)$/;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Each `--env NAME` (its value here) or `--env NAME=VALUE`, checked: a clear error for a bad name, a variable not set here, or one gpushare sets itself. */
export function namedEnv(flags: readonly string[], local: Readonly<Record<string, string | undefined>>): string[] {
  return flags.map((flag) => {
    const eq = flag.indexOf('=');
    const name = eq < 0 ? flag : flag.slice(0, eq);
    if (!NAME.test(name)) throw new UsageError(`--env ${flag}: "${name}" is not a variable name (letters, digits and "_", not starting with a digit).`);
    if (ENGINE_ONLY_ENV.test(name)) throw new UsageError(`--env ${name}: gpushare sets ${name} itself for every job; it cannot be passed.`);
    if (eq >= 0) return flag;
    const value = local[name];
    if (value === undefined) throw new UsageError(`--env ${name}: ${name} is not set here; give its value as --env ${name}=VALUE.`);
    return `${name}=${value}`;
  });
}

/** The entries sent: here, the whole local environment; for another box, only what ssh carries. Then the named ones, which win. */
export function sentEnv(local: Readonly<Record<string, string | undefined>>, named: readonly string[], toAnotherBox: boolean): string[] {
  const passed = Object.entries(local).filter(([k, v]) => v !== undefined && NAME.test(k) && (!toAnotherBox || CARRIED_TO_BOX.test(k)));
  return [...passed.map(([k, v]) => `${k}=${v}`), ...named];
}
