// The `gpushare` command: a thin dispatcher; each command lives in commands/.
import { UsageError } from './args.js';
import { daemonCommand, daemonUsage } from './commands/daemon.js';
import { migCommand, migUsage } from './commands/mig.js';
import { mpsCommand, mpsUsage } from './commands/mps.js';
import { engineCommand, engineUsage } from './commands/engine.js';
import { jobsCommand, jobsUsage } from './commands/jobs.js';
import { psCommand, psUsage } from './commands/ps.js';
import { runCommand, runUsage } from './commands/run.js';
import { reportCommand, reportUsage } from './commands/report.js';
import { serveCommand, serveUsage } from './commands/serve.js';
import { setCommand, setUsage } from './commands/set.js';
import { simCommand, simUsage } from './commands/sim.js';
import { startCommand, startUsage } from './commands/start.js';
import { statusCommand, statusUsage } from './commands/status.js';
import { stopCommand, stopUsage } from './commands/stop.js';
import { consoleCommand, consoleUsage } from './commands/console.js';

const usage = `gpushare — see and share the GPUs of a lab workstation

Commands:
  ps        GPUs and GPU processes (--json, --watch, --simulate)
  run       start a command as a managed job (GPU, priority, memory quota)
  jobs      managed jobs and GPU processes (--json, --all)
  set       change a job: priority, quota, suspend, resume, park, unpark, terminate
  report    usage by user, job or GPU as CSV, JSON, HTML or PDF
  serve     the engine headless, with the browser console on loopback
  engine    your personal engine headless, on its unix socket only (what the desktop app starts)
  sim       the simulated GPU driver: scenarios, env, fakejob, reset
  mig       plan MIG slices for a job mix, show a GPU's slices, apply a layout
  mps       MPS daemons per GPU: status (whose runs), start, stop
  start     the console: the desktop app, or the browser console where Electron is missing
  daemon    the box daemon: one scheduler for every user (run by systemd; daemon install)
  status    which engine answers (box daemon or personal), as whom, the console URL (--json)
  stop      stop your personal engine
  console   the browser console for the box daemon, through your own local proxy

${psUsage}

${reportUsage}

${runUsage}

${jobsUsage}

${setUsage}

${startUsage}

${statusUsage}

${stopUsage}

${consoleUsage}

${serveUsage}

${engineUsage}

${simUsage}

${migUsage}

${mpsUsage}

${daemonUsage}`;

const commands: Record<string, (argv: string[]) => Promise<number>> = {
  ps: psCommand,
  run: runCommand,
  jobs: jobsCommand,
  set: setCommand,
  report: reportCommand,
  serve: serveCommand,
  engine: engineCommand,
  sim: simCommand,
  mig: migCommand,
  mps: mpsCommand,
  start: startCommand,
  daemon: daemonCommand,
  status: statusCommand,
  stop: stopCommand,
  console: consoleCommand,
};

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
