// `gpushare sim`: drive the simulated GPU box that `--simulate` shows.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { constants } from 'node:os';
import { POINTED_BOX } from '../../engine/gpu/simulated-box-names.js';
import { listScenarios, SimulatedDriver } from '../../engine/gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../../engine/paths.js';
import { join } from 'node:path';
import { parseFlags, UsageError } from '../args.js';
import { simUsage } from '../usage.js';

export async function simCommand(argv: string[]): Promise<number> {
  const split = argv.indexOf('--');
  const own = split === -1 ? argv : argv.slice(0, split);
  const rest = split === -1 ? [] : argv.slice(split + 1);
  const { values, positionals } = parseFlags(own, { scenario: { type: 'string' } });
  const scenario = values.scenario ?? POINTED_BOX; // the box this shell points at, else the default one
  const [sub, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}". Pass fakejob arguments after "--".`);
  switch (sub) {
    case 'scenarios':
      process.stdout.write(listScenarios().join('\n') + '\n');
      return 0;
    case 'env': {
      const driver = await SimulatedDriver.named(scenario);
      for (const [key, value] of Object.entries(driver.env)) process.stdout.write(`export ${key}=${shellQuote(value)}\n`);
      return 0;
    }
    case 'reset': {
      const driver = await SimulatedDriver.named(scenario);
      if (driver.scenario === 'custom') throw new UsageError(`The box at ${driver.statePath} was made from a scenario file: name it again with --scenario FILE to reset it.`);
      rmSync(driver.statePath, { force: true });
      await SimulatedDriver.create({ scenario: driver.scenario, statePath: driver.statePath });
      process.stdout.write(`The simulated box "${driver.scenario}" starts afresh.\n`);
      return 0;
    }
    case 'fakejob': {
      if (rest.length === 0) throw new UsageError('gpushare sim fakejob needs the job after "--", e.g. -- --mem 2G train --kernel-ms 5 --duration 60');
      const driver = await SimulatedDriver.named(scenario);
      const child = spawn(join(fakegpuBuildDir(), 'fakejob'), rest, { stdio: 'inherit', env: { ...process.env, ...driver.env } });
      // the job's own status, or 128 + the signal's number as a shell reports a killed command
      return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1))));
    }
    default:
      throw new UsageError(sub ? `Unknown sim command "${sub}".\n${simUsage}` : simUsage);
  }
}

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;
