// Every command's usage text, in one light module (no engine, no driver): --help and the command
// table load it alone, without any command's own module. One module, not one per command: each
// module a command line loads costs it start-up time (bench/cli).
import { ADMIN_LAB_FILE, DAEMON_CONFIG, DAEMON_DB, DAEMON_SOCKET, LD_SO_PRELOAD, UNIT_PATH, daemonSocketPath } from '../engine/daemon/daemon-paths.js';
import { DEFAULT_SCENARIO } from '../engine/gpu/simulated-box-names.js';
import { BUILT_IN_MIG_MODELS } from '../engine/mig/profiles.js';

/** The usage line every engine-hosting command prints for it. */
export const METRICS_USAGE = `--metrics [ADDR:]PORT serves Prometheus/OpenMetrics metrics at http://ADDR:PORT/metrics (off unless given;
  127.0.0.1 unless ADDR names another address, e.g. 0.0.0.0:9400 for every interface).`;

// gpushare audit
export const AUDIT_DEFAULT_COUNT = 50;

export const auditUsage = `Usage: gpushare audit [--json] [--count N | --all]
  The changes asked of the engine, newest first: when, who, what, and "ok" or why it was refused.
  Refusals past the first few of a user and reason in an hour are one row that counts them (×N).
  You see your own entries; an administrator sees everyone's.
  --count N  the newest N entries (default ${AUDIT_DEFAULT_COUNT})
  --all      every entry the engine keeps (read page by page)
  --json     the entries as JSON (schema: AuditEntry in shared/jobs.ts)`;

// gpushare completion
export const completionUsage = `Usage: gpushare completion bash|zsh
  Prints a completion script for commands, subcommands and options. Load it with
    bash: source <(gpushare completion bash)      (or save it in ~/.local/share/bash-completion/completions/gpushare)
    zsh:  source <(gpushare completion zsh)       (after compinit)`;

// gpushare console
export const consoleUsage = `Usage: gpushare console [--port N] [--socket PATH] [--no-open]
  The browser console for the box daemon: connects to its socket as you and serves the console
  on 127.0.0.1 (a random port unless --port) with a one-time token, opening your browser unless
  --no-open. --socket: default $GPUSHARE_SOCKET, else ${daemonSocketPath()}.`;

// gpushare daemon
export const daemonRunUsage = `Usage: gpushare daemon [--socket PATH] [--db PATH] [--config PATH] [--simulate [SCENARIO]] [--metrics [ADDR:]PORT]
  Runs the engine as root for the whole box: every user's CLI, desktop app and console are its
  clients, named by the kernel. Socket ${DAEMON_SOCKET}, store ${DAEMON_DB},
  config ${DAEMON_CONFIG} unless given (a missing config means the defaults; a bad one is an
  error naming the key, and the daemon does not start: exit status 78). systemd runs it: see \`daemon install\`.
  ${METRICS_USAGE}`;

export const daemonInstallUsage = `Usage: gpushare daemon install [--root DIR] [--node PATH] [--preload-all | --no-preload-all]
  As root: writes ${UNIT_PATH} (running this installation), the default config if there is
  none (an existing one is kept), creates the admin group (gpushare-admin) if missing, and prints
  the command that starts it. --root DIR writes under DIR instead and creates no group (packaging,
  tests); --node PATH is the node binary the unit runs (default: this one, ${process.execPath}).
  --preload-all adds this installation's preload library to ${LD_SO_PRELOAD}, so that every program
  started on the box loads it and enrols at its first CUDA call (it stays inert in programs that never
  use CUDA); --no-preload-all takes it out. The file's other entries are kept.`;

export const daemonUsage = `${daemonRunUsage}\n${daemonInstallUsage}`;

// gpushare engine
export const engineUsage = `Usage: gpushare engine [--simulate [SCENARIO]] [--no-demo] [--rate HZ] [--until-stdin-closes] [--metrics [ADDR:]PORT]
  Runs your personal engine with no console: only its unix socket, for the desktop app and
  the CLI (prints "engine socket: PATH" once it answers). Simulated GPUs, with the demo jobs
  unless --no-demo, when no NVIDIA driver is found. Stops cleanly on SIGTERM, SIGINT or SIGHUP,
  and with --until-stdin-closes also when its standard input ends (the app that started it is gone).
  ${METRICS_USAGE}
  Defaults for --rate, --db and --metrics: engine.* in $XDG_CONFIG_HOME/gpushare/config.json (a flag wins).`;

// gpushare jobs
export const jobsUsage = `Usage: gpushare jobs [--json] [--all] [--box NAME]
  Managed jobs (j…, started by gpushare run) and every other GPU process (p<pid>).
  --all       include finished and failed jobs
  --json      the list as JSON (schema: JobView in shared/jobs.ts)
  --box NAME  those of that box of the lab list (see gpushare lab), asked of its daemon as you, as
              run --box reaches it; each row starts with the box's name`;

// gpushare mig
export const migPlanUsage = `Usage: gpushare mig plan --model MODEL --jobs SPEC[,SPEC…] [--gpu N] [--no-mps] [--json]
  --model MODEL        ${BUILT_IN_MIG_MODELS.join(', ')} (or a name like "NVIDIA H100 80GB HBM3")
  --jobs SPEC,…        each MEMORY[:SMSHARE][@PRIORITY], e.g. 30G,10G:0.2,20G@high
                       MEMORY 20G = 20GB = 20GiB (2^30 bytes, as everywhere in gpushare); profile names are
                       nominal: an H100's 1g.10gb holds 9.75G, its 1g.20gb 19.62G
                       SMSHARE 0-1 or 1-100% of the GPU's SMs; PRIORITY high, normal or best-effort
  --gpu N              GPU index for the printed nvidia-smi commands (default 0)
  --no-mps             one slice per job: never let jobs share a slice through MPS (by default they do
                       only where that places more jobs)
  --json               the plan as JSON (for scripts)`;

export const migLayoutUsage = `Usage: gpushare mig layout --gpu N [--json] [--simulate [SCENARIO]]
  The GPU's slices now: GPU/compute instances, profiles, placements and the processes in each.`;

export const migApplyUsage = `Usage: gpushare mig apply --gpu N (--jobs SPEC[,SPEC…] | --layout PROFILE[@START][,…]) [--dry-run] [--json]
                          [--simulate [SCENARIO]]
  Plans for the jobs (or takes the layout, e.g. 3g.40gb@4,2g.20gb) and applies it through the running
  engine (mig.apply), or directly with --simulate or --dry-run: only when the slices it changes are
  idle and the engine is root; otherwise it says what blocks it. --dry-run prints the commands.`;

export const migUsage = [migPlanUsage, migLayoutUsage, migApplyUsage].join('\n');

// gpushare mps
export const mpsUsage = `Usage: gpushare mps status|start|stop [--gpu N] [--gi GI] [--json]
  status   per GPU: off, ours (the engine's daemon) or held (another user's: one user's MPS per box),
           who started ours (jobs: it stops when their last one ends; a request: it runs until stopped),
           and the engine's daemons inside MIG slices
  start    start the engine's MPS control daemon for GPU N and keep it until stopped (jobs in --mode mps
           start one themselves, which stops with their last one)
  stop     stop it (its clients lose their server: stop them first); with --gi GI the daemon inside
           that MIG slice (jobs run with --mig-slice and --mps-share start and stop it themselves)`;

// gpushare ps
export const psUsage = `Usage: gpushare ps [--json] [--watch] [--rate HZ] [--simulate [SCENARIO]]
  --json               one snapshot as JSON (for scripts)
  --watch              refresh until Ctrl-C (--rate samples per second, 0.2-10, default 1)
  --simulate [NAME]    use the simulated GPU driver (without NAME: the box \`gpushare sim env\` pointed
                       this shell at, else scenario ${DEFAULT_SCENARIO})
  With an engine running (the box daemon, or your console or \`gpushare serve\`), ps shows what it
  sees, at its sampling rate; otherwise it reads the driver itself (--simulate always does).`;

// gpushare report
export const reportUsage = `Usage: gpushare report [--since 7d] [--until TIME] [--by user|job|gpu|container|slurm-job] [--format csv|json|html|pdf] [-o FILE] [--db PATH]
  --since, --until     a duration back from now (90m, 12h, 7d, 2w) or an ISO date (2026-11-01, 2026-11-01T09:00Z);
                       default: the last 7 days up to now
  --by                 one row per user (default), job or GPU; slurm-job: one per Slurm job this box ran
                       (its CSV's JobID column joins \`sacct -P\`'s JobIDRaw)
  --format             csv (default, or from -o's extension), json, html (charts), pdf (needs Chromium)
  -o FILE              write to FILE instead of standard output (required for pdf)
  --db PATH            the usage database (default: the box daemon's where one answers, asked of the daemon
                       when you may not read it; else $XDG_DATA_HOME/gpushare/usage.db)`;

// gpushare run
export const runUsage = `Usage: gpushare run [--gpu N|auto|N,M…] [--gpus N] [--priority high|normal|best-effort] [--mem SIZE]
                    [--request SIZE] [--mode shared|exclusive|mps|mig] [--mps-share PCT]
                    [--mig-slice MIG-UUID] [--keep-resident] [--wait SECONDS] [--box NAME]
                    [--env NAME[=VALUE]]… [--json] -- COMMAND [ARGS…]
  Starts COMMAND (no shell) as a managed job: on its GPU (default auto: the one with the most
  free memory), under the launch gate with a hard memory quota (--mem 20G), once its GPU has
  --request (default: the quota) free. Output goes to the job's log file.
  --gpus N runs it on N GPUs the scheduler picks, --gpu 0,2 on those (CUDA_VISIBLE_DEVICES lists them
  in that order, e.g. for torchrun --nproc-per-node N): it starts only when every one of them has room,
  all at once. --mem and --request are per GPU: each of its GPUs must have --request free, each process
  is told --mem on its GPU (less what it holds), and the gate holds its processes together to --mem
  times its GPUs. Its lane applies on each of its GPUs: a higher job on any of them holds the whole
  job back. Not with --mode mps or --mig-slice (one GPU each).
  Then follows it for up to --wait seconds (default 1) and says what it came to: running, queued
  and what it waits for, or failed (exit status 1 when it failed or could not start).
  --mode mps runs it as an MPS client with --mps-share percent of the SMs (its --mem becomes the
  pinned memory limit); --mig-slice (mode mig) runs it in one MIG slice (see gpushare mig layout),
  with --mps-share sharing the slice through the slice's own MPS daemon (percent of its SMs).
  --keep-resident: never park it to give its memory to another job while it is idle.
  SIZE like 20G (20 GiB: K, M, G, T are powers of 1024). Without --priority: engine.defaultPriority
  in $XDG_CONFIG_HOME/gpushare/config.json, else normal.
  The job gets your environment here.
  --box NAME: on that box of the lab list (see gpushare lab), as you there, in the same working
  directory (refused when it does not exist there), with that box's login environment for you (HOME,
  USER, LOGNAME, SHELL from its passwd, its default PATH) as ssh would give it, plus LANG, LC_*, TERM,
  COLORTERM, NO_COLOR and TZ from here: not your PATH, LD_LIBRARY_PATH, VIRTUAL_ENV and the rest,
  which are this machine's. Follow it with gpushare jobs --box NAME, change or end it with
  gpushare set JOB --box NAME (its log is on that box, at the path printed).
  --env NAME passes NAME's value here, --env NAME=VALUE that value (repeatable; they win over the
  rest). gpushare's own variables (LD_PRELOAD, GPUSHARE_*, CUDA_VISIBLE_DEVICES, CUDA_MPS_*) are
  set for every job and cannot be passed.`;

// gpushare serve
export const serveUsage = `Usage: gpushare serve [--port N] [--rate HZ] [--simulate [SCENARIO]] [--db PATH] [--metrics [ADDR:]PORT]
  Runs the engine and serves the browser console on 127.0.0.1 (a random port unless --port),
  printing a URL with a one-time token. Falls back to simulated GPUs when no NVIDIA driver is found.
  Records usage in --db (default $XDG_DATA_HOME/gpushare/usage.db) for \`gpushare report\`.
  ${METRICS_USAGE}
  Defaults for --rate, --db and --metrics: engine.* in $XDG_CONFIG_HOME/gpushare/config.json (a flag wins).`;

// gpushare set
export const setUsage = `Usage: gpushare set JOB [--priority high|normal|best-effort] [--mem SIZE|none]
                    [--suspend | --resume | --park | --unpark | --terminate] [--wait SECONDS] [--box NAME] [--json]
  JOB is a job id (j12) or a GPU process (p4242, or just its pid). The changes are one move:
  all are made, or none when one is refused. Then it prints the job's state and why. --park checkpoints the job's GPU memory to host memory (its GPU is
  free meanwhile); --unpark restores it on the same GPU. A park or unpark is followed until it
  completes, a terminate until the job has ended, up to --wait seconds (default 10; exit status 1
  when it has not). SIZE like 20G (20 GiB: K, M, G, T are powers of 1024).
  --box NAME: a job on that box of the lab list (see gpushare lab), e.g. one run --box started there;
  that box's daemon decides what you may change, as it would for you there.`;

// gpushare sim
const SIM_SUBCOMMANDS: Record<string, string> = {
  scenarios: 'list the simulated GPU boxes',
  env: 'print the environment that points CUDA programs at the simulated GPUs',
  'fakejob -- ARGS…': 'run a simulated GPU job in the foreground (see native/fakegpu/README.md)',
  reset: 'start the simulated box afresh (no processes, no faults)',
};

const simTail = `Without --scenario: the box \`sim env\` pointed this shell at ($GPUSHARE_FAKEGPU_STATE), else ${DEFAULT_SCENARIO}'s;\n\`gpushare ps --simulate [NAME]\` shows the same box.`;

export const simUsage = `Usage: gpushare sim COMMAND [--scenario NAME]
${Object.entries(SIM_SUBCOMMANDS).map(([name, what]) => `  ${name.padEnd(24)}  ${what}`).join('\n')}
${simTail}`;

/** Each subcommand's own usage, for \`gpushare sim SUB --help\`. */
export const simSubcommandUsage: Record<string, string> = Object.fromEntries(
  Object.entries(SIM_SUBCOMMANDS).map(([name, what]) => {
    const [sub, ...args] = name.split(' ');
    return [sub, `Usage: gpushare sim ${sub} [--scenario NAME]${args.length ? ` ${args.join(' ')}` : ''}\n  ${what}\n${simTail}`];
  }),
);

// gpushare start
export const startUsage = `Usage: gpushare start [--simulate [SCENARIO]] [--browser] [--port N] [--no-demo] [--no-sandbox] [--metrics [ADDR:]PORT]
       gpushare start --lab [--port N]
  Opens the desktop console (fetching Electron's binary first when it is missing); where
  Electron cannot run, serves the browser console on 127.0.0.1 instead. Simulated GPUs
  (with a small live demo) when no NVIDIA driver is found. --no-sandbox runs the desktop
  app without Chromium's sandbox (only where it cannot start one, and knowing the cost).
  ${METRICS_USAGE}
  --lab serves the Lab view in the browser console instead: every box of the lab list (see
  gpushare lab), each reached as you; opening a box shows its console, every action going to
  that box's daemon. No engine is started here.`;

// gpushare status
export const statusUsage = `Usage: gpushare status [--json]
  Which engine answers (the box daemon, or a personal engine: whose, its pid and socket), as whom
  it sees you, whether you are an admin, the browser console's URL, and other users' engines on
  this box. Looks at $GPUSHARE_SOCKET alone when it is set; else the box daemon
  (/run/gpushare/engine.sock, or $GPUSHARE_DAEMON_SOCKET), then your personal engine.
  Exit status 0 when an engine answers, 1 when none does.`;

// gpushare stop
export const stopUsage = `Usage: gpushare stop
  Stops your personal engine (\`gpushare serve\`, \`start\`, \`engine\`) as Ctrl-C would: it resumes
  what it suspended and restores parked jobs first; managed jobs keep running and the next engine
  re-adopts them. Waits until its socket no longer answers (at most 30 s). Looks at $GPUSHARE_SOCKET
  alone when it is set. The box daemon is stopped by an admin: systemctl stop gpushare.`;

// gpushare lab
export const labPsUsage = `Usage: gpushare lab ps [--json] [--watch] [--wait SECONDS]
  Every box of the lab list: its state (connected, or down since when and why), its GPUs
  (utilization, memory, whose processes, MIG slices, queued jobs), then each person's totals
  across the boxes. Waits up to --wait seconds (default 10) for the boxes to answer; a box that
  has not is shown as it stands. --watch: redrawn once a second until Ctrl-C, each box kept up
  on its own (a box that goes down shows so, with its next try, and comes back when it answers again).`;

export const labWhereUsage = `Usage: gpushare lab where --mem SIZE [--gpus N] [--priority high|normal|best-effort] [--json] [--wait SECONDS]
  The boxes and GPUs that can start a job now (free memory, your limits under each box's lab
  policy, the jobs queued ahead of it), best first; then why each other box cannot. On a GPU
  in MIG mode the places are its slices (a one-GPU job runs in one). Ranked by the queue ahead,
  then how busy (in quarters of utilization; a slice by its own SMs, idle when nothing runs in it),
  then free memory. It prints the \`gpushare run --box NAME [--mig-slice MIG-UUID] [--gpu A,B…] --mem SIZE\`
  that starts it in the first (with --gpus N, on the N GPUs found there; --mem is per GPU);
  --json gives each place's box, GPUs, slice and \`run\` flags.`;

export const labUsage = `Usage: gpushare lab ps|where …
  The lab's boxes in one view, each reached as you: over ssh (your keys, agent and
  ~/.ssh/config) or a socket on this machine. The list: ${ADMIN_LAB_FILE} (the admin's) and
  ~/.config/gpushare/lab.json (your own, added to it; an entry of the same name replaces the admin's), like
    {"boxes": [{"name": "box1", "ssh": "box1.lab"}, {"name": "box2", "ssh": "alice@10.0.0.2"}]}
  Each entry: name; ssh (a destination as ssh takes it); socket (the daemon's socket there,
  default /run/gpushare/engine.sock, or alone: a socket on this machine); gpushare (the command
  on the box, default gpushare, for \`gpushare relay --stdio\` where it will not forward a socket).
  Also: gpushare run --box NAME [--env NAME[=VALUE]]… -- COMMAND starts a job on a box (see
  gpushare run --help), gpushare jobs --box NAME lists that box's jobs and gpushare set JOB --box NAME
  changes or ends one; gpushare start --lab serves the Lab view, each box's console a click away.

${labPsUsage}

${labWhereUsage}`;

// gpushare relay
export const relayUsage = `Usage: gpushare relay --stdio [--socket PATH]
  Relays the gpushare API between stdin/stdout and the box daemon's socket (default
  /run/gpushare/engine.sock), as you: \`ssh BOX gpushare relay --stdio\` is how \`gpushare lab\`
  reaches a box whose sshd does not forward sockets. It holds at most a few tens of KB in each
  direction: a side that does not read slows the other. Exits when either side closes.`;

// gpushare enrol
export const enrolUsage = `Usage: gpushare enrol [--priority high|normal|best-effort] [--mem SIZE] [--keep-resident] -- COMMAND [ARGS…]
       gpushare enrol --shell bash|zsh [--install]
  The first form runs COMMAND (no shell, in the foreground, its exit status is enrol's) with the preload
  library loaded: at its first CUDA call it enrols as one job with these options (a hard memory quota
  --mem 20G across its processes, its priority lane), as a \`gpushare run\` job is managed. The options
  are registered with the engine by this process before COMMAND starts. With no engine answering,
  COMMAND runs unmanaged (said on stderr).
  --shell prints the line that loads the library into every program of your bash or zsh sessions: a
  program that never uses the CUDA driver does not notice it; one that does enrols at its first call
  (a notebook kernel, a script, its process tree: one job each). --install appends that line to
  ~/.bashrc or ~/.zshrc (once) and says where. An administrator's /etc/gpushare/preload-off stops
  every enrolment.`;

// gpushare jupyter
export const DEFAULT_KERNEL_NAME = 'gpushare-python3';
export const KERNEL_PYTHON = '/usr/bin/python3';

export const jupyterInstallKernelUsage = `Usage: gpushare jupyter install-kernel [--name NAME] [--priority high|normal|best-effort] [--mem SIZE] [--auto-park] [--user|--sys-prefix]
  Writes a Jupyter kernelspec (default name ${DEFAULT_KERNEL_NAME}) that starts ${KERNEL_PYTHON}'s ipykernel with
  gpushare's preload library: each running kernel enrols as one job at its first CUDA call, with these
  settings (the lab policy's limits apply). --mem is a hard memory quota for the kernel (20G = 20 GiB);
  --auto-park lets the engine park the kernel's GPU memory while it is idle and another job needs it
  (its next cell waits for the restore); without it the kernel keeps its memory. Written in your Jupyter
  data directory ($JUPYTER_DATA_DIR, else ~/.local/share/jupyter); as root in /usr/local/share/jupyter
  (--user: root's own); --sys-prefix: in ${KERNEL_PYTHON}'s prefix (/usr/share/jupyter). Prints where.`;
export const jupyterUsage = jupyterInstallKernelUsage; // its one subcommand

// gpushare slurm
export const SLURM_LOG = '/var/log/gpushare/slurm.log';

export const slurmUsage = `Usage: gpushare slurm prolog|epilog|task-prolog [--strict] [--log FILE]
  For slurm.conf on a GPU node (run by slurmd, never by hand), each through a script of root's, mode 0755:
    Prolog=/usr/local/sbin/gpushare-slurm-prolog         (slurm prolog)
    Epilog=/usr/local/sbin/gpushare-slurm-epilog         (slurm epilog)
    TaskProlog=/usr/local/sbin/gpushare-slurm-task-prolog (slurm task-prolog)
  slurmd gives them no PATH: each script names node and gpushare.js by full path, e.g.
    exec /usr/bin/node /opt/gpushare/electron/cli/gpushare.js slurm prolog
  prolog       registers the job with the box daemon: its GPUs, shards (its memory quota), gres/mps
               share (its GPU's MPS daemon started), QOS and partition (its lane), read with scontrol
  epilog       ends the job: holds let go, usage written to the log, processes left on a GPU named
  task-prolog  prints "export LD_PRELOAD=…" so the job's tasks enrol at their first CUDA call
               (nothing when /etc/ld.so.preload loads the library box-wide), and for a gres/mps job
               the MPS client's CUDA_MPS_* variables the daemon gives it
  A problem on gpushare's side is logged (--log, else $GPUSHARE_SLURM_LOG, else ${SLURM_LOG}) and
  the job runs unmanaged: exit 0. --strict exits 1 instead (Slurm then fails the job and drains the node).`;
