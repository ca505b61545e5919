// Every `gpushare` command and subcommand in one table: the dispatcher, --help, `help CMD` and the
// completion scripts all read it, so a new command is one row and answers --help at once.
import { splitRunArgs } from './commands/run.js';
import { auditCommand, auditUsage } from './commands/audit.js';
import { completionCommand, completionUsage } from './commands/completion.js';
import { consoleCommand, consoleUsage } from './commands/console.js';
import { daemonCommand, daemonInstallUsage, daemonUsage } from './commands/daemon.js';
import { engineCommand, engineUsage } from './commands/engine.js';
import { enrolCommand, enrolUsage, splitEnrolArgs } from './commands/enrol.js';
import { jobsCommand, jobsUsage } from './commands/jobs.js';
import { labCommand, labPsUsage, labUsage, labWhereUsage } from './commands/lab.js';
import { relayCommand, relayUsage } from './commands/relay.js';
import { slurmCommand, slurmUsage } from './commands/slurm.js';
import { migApplyUsage, migCommand, migLayoutUsage, migPlanUsage, migUsage } from './commands/mig.js';
import { mpsCommand, mpsUsage } from './commands/mps.js';
import { psCommand, psUsage } from './commands/ps.js';
import { reportCommand, reportUsage } from './commands/report.js';
import { runCommand, runUsage } from './commands/run.js';
import { serveCommand, serveUsage } from './commands/serve.js';
import { setCommand, setUsage } from './commands/set.js';
import { simCommand, simSubcommandUsage, simUsage } from './commands/sim.js';
import { startCommand, startUsage } from './commands/start.js';
import { statusCommand, statusUsage } from './commands/status.js';
import { stopCommand, stopUsage } from './commands/stop.js';

export interface CliCommand {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Starts with "Usage: gpushare NAME"; what --help prints. */
  usage: string;
  /** Subcommand name → its own usage (what `gpushare NAME SUB --help` prints). */
  subcommands?: Record<string, string>;
  /** The arguments that are gpushare's own (the rest belongs to a command it starts); default: those before "--". */
  ownArgs?: (argv: string[]) => string[];
  run: (argv: string[]) => Promise<number>;
}

const beforeDoubleDash = (argv: string[]): string[] => (argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv);

export const COMMANDS: readonly CliCommand[] = [
  { name: 'ps', summary: 'GPUs and GPU processes (--json, --watch, --simulate)', usage: psUsage, run: psCommand },
  {
    name: 'run',
    summary: 'start a command as a managed job (GPU, priority, memory quota)',
    usage: runUsage,
    run: runCommand,
    // `gpushare run -- python train.py --help` asks python, not gpushare
    ownArgs: (argv) => {
      try {
        return argv.slice(0, argv.length - splitRunArgs(argv).command.length);
      } catch {
        return beforeDoubleDash(argv);
      }
    },
  },
  {
    name: 'enrol',
    summary: 'run a command enrolled (priority, quota), or load the library into your shell sessions (--shell)',
    usage: enrolUsage,
    run: enrolCommand,
    ownArgs: (argv) => {
      try {
        return argv.slice(0, argv.length - splitEnrolArgs(argv).command.length);
      } catch {
        return beforeDoubleDash(argv);
      }
    },
  },
  { name: 'jobs', summary: 'managed jobs and GPU processes (--json, --all)', usage: jobsUsage, run: jobsCommand },
  { name: 'audit', summary: 'the changes asked of the engine: who, when, what came of them (--json, --count N, --all)', usage: auditUsage, run: auditCommand },
  { name: 'set', summary: 'change a job: priority, quota, suspend, resume, park, unpark, terminate', usage: setUsage, run: setCommand },
  { name: 'report', summary: 'usage by user, job or GPU as CSV, JSON, HTML or PDF', usage: reportUsage, run: (argv) => reportCommand(argv) },
  { name: 'serve', summary: 'the engine headless, with the browser console on loopback', usage: serveUsage, run: serveCommand },
  { name: 'engine', summary: "your personal engine headless, on its unix socket only (what the desktop app starts)", usage: engineUsage, run: engineCommand },
  { name: 'sim', summary: 'the simulated GPU driver: scenarios, env, fakejob, reset', usage: simUsage, subcommands: simSubcommandUsage, run: simCommand },
  {
    name: 'mig',
    summary: "plan MIG slices for a job mix, show a GPU's slices, apply a layout",
    usage: migUsage,
    subcommands: { plan: migPlanUsage, layout: migLayoutUsage, apply: migApplyUsage },
    run: migCommand,
  },
  {
    name: 'mps',
    summary: 'MPS daemons per GPU: status (whose runs), start, stop',
    usage: mpsUsage,
    subcommands: { status: mpsUsage, start: mpsUsage, stop: mpsUsage },
    run: mpsCommand,
  },
  { name: 'start', summary: 'the console: the desktop app, or the browser console where Electron is missing', usage: startUsage, run: startCommand },
  {
    name: 'daemon',
    summary: 'the box daemon: one scheduler for every user (run by systemd; daemon install)',
    usage: daemonUsage,
    subcommands: { install: daemonInstallUsage },
    run: daemonCommand,
  },
  {
    name: 'lab',
    summary: "every box of the lab in one view (ps), and where a job can start now (where)",
    usage: labUsage,
    subcommands: { ps: labPsUsage, where: labWhereUsage },
    run: labCommand,
  },
  { name: 'slurm', summary: "Slurm's Prolog=, Epilog= and TaskProlog= on a GPU node: Slurm jobs get quotas, lanes and usage", usage: slurmUsage, run: slurmCommand },
  { name: 'relay', summary: "the API over stdin/stdout to this box's daemon, as you (what gpushare lab runs over ssh)", usage: relayUsage, run: relayCommand },
  { name: 'status', summary: 'which engine answers (box daemon or personal), as whom, the console URL (--json)', usage: statusUsage, run: statusCommand },
  { name: 'stop', summary: 'stop your personal engine', usage: stopUsage, run: stopCommand },
  { name: 'console', summary: 'the browser console for the box daemon, through your own local proxy', usage: consoleUsage, run: consoleCommand },
  {
    name: 'completion',
    summary: 'a bash or zsh completion script: source <(gpushare completion bash)',
    usage: completionUsage,
    subcommands: { bash: completionUsage, zsh: completionUsage },
    run: (argv) => completionCommand(argv, COMMANDS),
  },
];

export const findCommand = (name: string): CliCommand | undefined => COMMANDS.find((c) => c.name === name);

/** What `gpushare CMD [SUB] … --help` should print, or null when no --help/-h is gpushare's own. */
export function helpFor(command: CliCommand, argv: string[]): string | null {
  const own = (command.ownArgs ?? beforeDoubleDash)(argv);
  // `gpushare mig help` as the subcommand-taking commands always answered it
  if (!own.some((arg) => arg === '--help' || arg === '-h') && !(command.subcommands && own[0] === 'help')) return null;
  return usageOf(command, own.find((arg) => !arg.startsWith('-')));
}

/** The usage of a command, or of one of its subcommands when `sub` names one. */
export function usageOf(command: CliCommand, sub: string | undefined): string {
  return (sub !== undefined && command.subcommands?.[sub]) || command.usage;
}

