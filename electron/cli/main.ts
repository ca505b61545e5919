// The `gpushare` command: a thin dispatcher over the command table; each command lives in commands/.
// --version loads nothing else; the table (usage text only) loads for anything more, a command's module when it runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from './usage-error.js';
import type { CliCommand } from './command-table.js';

/** The exit statuses every command keeps to (the daemon adds 78 for a config it will not start with). */
export const EXIT = { done: 0, failed: 1, usage: 2 } as const;

export const EXIT_STATUS_HELP = `Exit status: 0 done, 1 it failed (no engine, the engine refused, a job that failed), 2 usage error
(an unknown command or option, a value the command line itself can tell is wrong); \`gpushare daemon\`
exits 78 on a config it will not start with, \`sim fakejob\` with the job's own status.
Sizes: 20G means 20 GiB (2^30 bytes) everywhere; K, M, G, T are powers of 1024, with or without B or iB.`;

/** The whole --help: every command's summary and usage. */
const fullUsage = (COMMANDS: readonly CliCommand[]): string => `gpushare — see and share the GPUs of a lab workstation

Usage: gpushare COMMAND [OPTIONS]    gpushare COMMAND --help    gpushare --version

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(12)}${c.summary}`).join('\n')}

${EXIT_STATUS_HELP}

${COMMANDS.map((c) => c.usage).join('\n\n')}`;

/** The version in package.json (where the package lies is paths.ts's to say, loaded for --version alone). */
export async function gpushareVersion(): Promise<string> {
  const { packageRoot } = await import('../engine/paths.js');
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    process.stdout.write(`gpushare ${await gpushareVersion()}\n`);
    return EXIT.done;
  }
  const table = await import('./command-table.js');
  const usage = fullUsage(table.COMMANDS);
  if (name === '--help' || name === '-h' || (name === 'help' && rest.length === 0)) {
    process.stdout.write(usage + '\n');
    return EXIT.done;
  }
  try {
    if (name === undefined) throw new UsageError(`Which command?\n${usage}`);
    if (name === 'help') return printHelp(rest, table);
    const command = table.findCommand(name);
    if (!command) throw new UsageError(`Unknown command "${name}". Run \`gpushare --help\` for the list.`);
    const help = table.helpFor(command, rest);
    if (help !== null) {
      process.stdout.write(help + '\n');
      return EXIT.done;
    }
    return await command.run(rest);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`gpushare${name === undefined ? '' : ` ${name}`}: ${message}\n`);
    return error instanceof UsageError ? EXIT.usage : EXIT.failed;
  }
}

/** `gpushare help CMD [SUB]`. */
function printHelp([name, sub]: string[], { findCommand, usageOf }: typeof import('./command-table.js')): number {
  const command = findCommand(name);
  if (!command) throw new UsageError(`No command "${name}". Run \`gpushare --help\` for the list.`);
  process.stdout.write(usageOf(command, sub) + '\n');
  return EXIT.done;
}
