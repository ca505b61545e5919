// The `gpushare` command: a thin dispatcher; each command lives in commands/.
import { UsageError } from './args.js';
import { migCommand, migUsage } from './commands/mig.js';
import { psCommand, psUsage } from './commands/ps.js';
import { serveCommand, serveUsage } from './commands/serve.js';
import { simCommand, simUsage } from './commands/sim.js';

const usage = `gpushare — see and share the GPUs of a lab workstation

Commands:
  ps        GPUs and GPU processes (--json, --watch, --simulate)
  serve     the engine headless, with the browser console on loopback
  sim       the simulated GPU driver: scenarios, env, fakejob, reset
  mig       plan MIG slices for a job mix and print the nvidia-smi commands
  start     the console (for now the live terminal view; simulated GPUs when no NVIDIA driver is found)

${psUsage}

${serveUsage}

${simUsage}

${migUsage}`;

const commands: Record<string, (argv: string[]) => Promise<number>> = {
  ps: psCommand,
  serve: serveCommand,
  sim: simCommand,
  mig: migCommand,
  start: startCommand,
};

/** Until the desktop console lands, `start` is the live view that falls back to simulated GPUs. */
async function startCommand(argv: string[]): Promise<number> {
  const { openGpuBackend } = await import('../engine/gpu/open-backend.js');
  const probe = await openGpuBackend({
    fallBackToSimulated: true,
    onFallback: (reason) => process.stderr.write(`No NVIDIA driver found (${reason.split('\n')[0]}). Starting on simulated GPUs.\n`),
  });
  const simulated = probe.simulated?.scenario;
  probe.close();
  return psCommand(['--watch', ...(simulated ? ['--simulate', simulated] : []), ...argv]);
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(usage + '\n');
    return name ? 0 : 2;
  }
  const command = commands[name];
  try {
    if (!command) throw new UsageError(`Unknown command "${name}". Run \`gpushare help\` for the list.`);
    return await command(rest);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`gpushare ${name}: ${message}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}
