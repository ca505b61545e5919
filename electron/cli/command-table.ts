// Every `gpushare` command and subcommand in one table: the dispatcher, --help, `help CMD` and the
// completion scripts all read it, so a new command is one row and answers --help at once. The table
// holds only usage text (one light module, usage.ts); a command's own module is loaded when it runs.
import { splitEnrolArgs, splitRunArgs } from './run-args.js';
import { auditUsage, enrolUsage, jupyterInstallKernelUsage, jupyterUsage, labPsUsage, labUsage, labWhereUsage, relayUsage, slurmUsage, completionUsage, consoleUsage, daemonInstallUsage, daemonUsage, engineUsage, jobsUsage, migApplyUsage, migLayoutUsage, migPlanUsage, migUsage, mpsUsage, psUsage, reportUsage, runUsage, serveUsage, setUsage, simSubcommandUsage, simUsage, startUsage, statusUsage, stopUsage } from './usage.js';

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
  /** Loads the command's module (only now: a command line pays for the command it runs) and runs it. */
  run: (argv: string[]) => Promise<number>;
}

const beforeDoubleDash = (argv: string[]): string[] => (argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv);

export const COMMANDS: readonly CliCommand[] = [
  { name: 'ps', summary: 'GPUs and GPU processes (--json, --watch, --simulate)', usage: psUsage, run: (argv) => import('./commands/ps.js').then((m) => m.psCommand(argv)) },
  {
    name: 'run',
    summary: 'start a command as a managed job (GPU, priority, memory quota)',
    usage: runUsage,
    run: (argv) => import('./commands/run.js').then((m) => m.runCommand(argv)),
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
    run: (argv) => import('./commands/enrol.js').then((m) => m.enrolCommand(argv)),
    ownArgs: (argv) => {
      try {
        return argv.slice(0, argv.length - splitEnrolArgs(argv).command.length);
      } catch {
        return beforeDoubleDash(argv);
      }
    },
  },
  { name: 'jobs', summary: 'managed jobs and GPU processes (--json, --all)', usage: jobsUsage, run: (argv) => import('./commands/jobs.js').then((m) => m.jobsCommand(argv)) },
  { name: 'audit', summary: 'the changes asked of the engine: who, when, what came of them (--json, --count N, --all)', usage: auditUsage, run: (argv) => import('./commands/audit.js').then((m) => m.auditCommand(argv)) },
  { name: 'set', summary: 'change a job: priority, quota, suspend, resume, park, unpark, terminate', usage: setUsage, run: (argv) => import('./commands/set.js').then((m) => m.setCommand(argv)) },
  { name: 'report', summary: 'usage by user, job or GPU as CSV, JSON, HTML or PDF', usage: reportUsage, run: (argv) => import('./commands/report.js').then((m) => m.reportCommand(argv)) },
  { name: 'serve', summary: 'the engine headless, with the browser console on loopback', usage: serveUsage, run: (argv) => import('./commands/serve.js').then((m) => m.serveCommand(argv)) },
  { name: 'engine', summary: "your personal engine headless, on its unix socket only (what the desktop app starts)", usage: engineUsage, run: (argv) => import('./commands/engine.js').then((m) => m.engineCommand(argv)) },
  { name: 'sim', summary: 'the simulated GPU driver: scenarios, env, fakejob, reset', usage: simUsage, subcommands: simSubcommandUsage, run: (argv) => import('./commands/sim.js').then((m) => m.simCommand(argv)) },
  {
    name: 'mig',
    summary: "plan MIG slices for a job mix, show a GPU's slices, apply a layout",
    usage: migUsage,
    subcommands: { plan: migPlanUsage, layout: migLayoutUsage, apply: migApplyUsage },
    run: (argv) => import('./commands/mig.js').then((m) => m.migCommand(argv)),
  },
  {
    name: 'mps',
    summary: 'MPS daemons per GPU: status (whose runs), start, stop',
    usage: mpsUsage,
    subcommands: { status: mpsUsage, start: mpsUsage, stop: mpsUsage },
    run: (argv) => import('./commands/mps.js').then((m) => m.mpsCommand(argv)),
  },
  { name: 'start', summary: 'the console: the desktop app, or the browser console where Electron is missing', usage: startUsage, run: (argv) => import('./commands/start.js').then((m) => m.startCommand(argv)) },
  {
    name: 'daemon',
    summary: 'the box daemon: one scheduler for every user (run by systemd; daemon install)',
    usage: daemonUsage,
    subcommands: { install: daemonInstallUsage },
    run: (argv) => import('./commands/daemon.js').then((m) => m.daemonCommand(argv)),
  },
  {
    name: 'jupyter',
    summary: 'install-kernel: a Jupyter kernelspec whose kernels enrol as jobs (priority, quota, auto-park)',
    usage: jupyterUsage,
    subcommands: { 'install-kernel': jupyterInstallKernelUsage },
    run: (argv) => import('./commands/jupyter.js').then((m) => m.jupyterCommand(argv)),
  },
  {
    name: 'lab',
    summary: "every box of the lab in one view (ps), and where a job can start now (where)",
    usage: labUsage,
    subcommands: { ps: labPsUsage, where: labWhereUsage },
    run: (argv) => import('./commands/lab.js').then((m) => m.labCommand(argv)),
  },
  {
    name: 'slurm',
    summary: "Slurm's Prolog=, Epilog= and TaskProlog= on a GPU node: Slurm jobs get quotas, lanes and usage",
    usage: slurmUsage,
    subcommands: { prolog: slurmUsage, epilog: slurmUsage, 'task-prolog': slurmUsage },
    run: (argv) => import('./commands/slurm.js').then((m) => m.slurmCommand(argv)),
  },
  { name: 'relay', summary: "the API over stdin/stdout to this box's daemon, as you (what gpushare lab runs over ssh)", usage: relayUsage, run: (argv) => import('./commands/relay.js').then((m) => m.relayCommand(argv)) },
  { name: 'status', summary: 'which engine answers (box daemon or personal), as whom, the console URL (--json)', usage: statusUsage, run: (argv) => import('./commands/status.js').then((m) => m.statusCommand(argv)) },
  { name: 'stop', summary: 'stop your personal engine', usage: stopUsage, run: (argv) => import('./commands/stop.js').then((m) => m.stopCommand(argv)) },
  { name: 'console', summary: 'the browser console for the box daemon, through your own local proxy', usage: consoleUsage, run: (argv) => import('./commands/console.js').then((m) => m.consoleCommand(argv)) },
  {
    name: 'completion',
    summary: 'a bash or zsh completion script: source <(gpushare completion bash)',
    usage: completionUsage,
    subcommands: { bash: completionUsage, zsh: completionUsage },
    run: (argv) => import('./commands/completion.js').then((m) => m.completionCommand(argv, COMMANDS)),
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

