// `gpushare jupyter install-kernel`: the Jupyter route of enrolment. A kernelspec that starts Debian's
// python3 ipykernel through assets/jupyter/gpushare-kernel.py, which hands the engine the kernelspec's
// options (enrol.register) and then becomes the kernel with the preload library: each running kernel is
// one enrolled job with those options, from its first CUDA call.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { formatByteSize, parseByteSize } from '../../../shared/byte-size.js';
import { PRIORITIES, type Priority } from '../../../shared/jobs.js';
import { outsideAsar, packageRoot } from '../../engine/paths.js';
import { parseFlags, UsageError } from '../args.js';
import { installedPreloadLibrary } from './preload-all.js';

export const DEFAULT_KERNEL_NAME = 'gpushare-python3';
export const KERNEL_PYTHON = '/usr/bin/python3';
/** python3 runs it: a real file, outside any asar. */
export const kernelLauncher = (root = packageRoot()): string => outsideAsar(join(root, 'assets', 'jupyter', 'gpushare-kernel.py'));

export const jupyterInstallKernelUsage = `Usage: gpushare jupyter install-kernel [--name NAME] [--priority high|normal|best-effort] [--mem SIZE] [--auto-park] [--user|--sys-prefix]
  Writes a Jupyter kernelspec (default name ${DEFAULT_KERNEL_NAME}) that starts ${KERNEL_PYTHON}'s ipykernel with
  gpushare's preload library: each running kernel enrols as one job at its first CUDA call, with these
  settings (the lab policy's limits apply). --mem is a hard memory quota for the kernel (20G = 20 GiB);
  --auto-park lets the engine park the kernel's GPU memory while it is idle and another job needs it
  (its next cell waits for the restore); without it the kernel keeps its memory. Written in your Jupyter
  data directory ($JUPYTER_DATA_DIR, else ~/.local/share/jupyter); as root in /usr/local/share/jupyter
  (--user: root's own); --sys-prefix: in ${KERNEL_PYTHON}'s prefix (/usr/share/jupyter). Prints where.`;
export const jupyterUsage = jupyterInstallKernelUsage; // its one subcommand

export interface KernelOptions {
  name: string;
  priority?: Priority;
  memoryQuotaBytes?: number;
  autoPark: boolean;
}

export interface Kernelspec {
  argv: string[];
  display_name: string;
  language: 'python';
  interrupt_mode: 'signal';
  metadata: { debugger: true; gpushare: { priority: Priority | null; memoryQuotaBytes: number | null; autoPark: boolean } };
}

/** The kernelspec for these options: the launcher, its options, then the kernel's own command line. */
export function kernelspec(options: KernelOptions, paths: { launcher: string; library: string; python?: string }): Kernelspec {
  // LD_PRELOAD parts its entries at spaces and colons: such a path would load nothing, or something else
  if (/[\s:]/.test(paths.library)) throw new Error(`The preload library's path ${JSON.stringify(paths.library)} holds a space or a colon, which LD_PRELOAD cannot carry: install gpushare where its path has neither.`);
  const python = paths.python ?? KERNEL_PYTHON;
  const own = [
    '--library', paths.library,
    ...(options.priority ? ['--priority', options.priority] : []),
    ...(options.memoryQuotaBytes !== undefined ? ['--mem', String(options.memoryQuotaBytes)] : []),
    ...(options.autoPark ? ['--auto-park'] : []),
  ];
  const said = [options.priority, options.memoryQuotaBytes !== undefined ? `${formatByteSize(options.memoryQuotaBytes)} quota` : undefined, options.autoPark ? 'auto-park' : undefined].filter(Boolean);
  return {
    argv: [python, paths.launcher, ...own, '--', python, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
    display_name: `Python 3 (gpushare${said.length ? `: ${said.join(', ')}` : ''})`,
    language: 'python',
    interrupt_mode: 'signal',
    // debugger: as Debian's own python3 kernelspec (ipykernel 6 supports JupyterLab's debugger)
    metadata: { debugger: true, gpushare: { priority: options.priority ?? null, memoryQuotaBytes: options.memoryQuotaBytes ?? null, autoPark: options.autoPark } },
  };
}

/** Where kernelspecs go, as jupyter_core has it: the user's data directory, the system's, or the prefix's. */
export function kernelsDir(where: 'user' | 'system' | 'sys-prefix', env: NodeJS.ProcessEnv = process.env, prefix = '/usr'): string {
  if (where === 'system') return '/usr/local/share/jupyter/kernels';
  if (where === 'sys-prefix') return join(prefix, 'share', 'jupyter', 'kernels');
  const data = env.JUPYTER_DATA_DIR || join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share'), 'jupyter');
  return join(data, 'kernels');
}

export async function jupyterCommand(argv: string[], euid = process.geteuid?.()): Promise<number> {
  if (argv[0] !== 'install-kernel') throw new UsageError(`${argv[0] === undefined ? 'Which jupyter command?' : `Unknown jupyter command "${argv[0]}".`}\n${jupyterUsage}`);
  const { values, positionals } = parseFlags(argv.slice(1), {
    name: { type: 'string' }, priority: { type: 'string' }, mem: { type: 'string' }, 'auto-park': { type: 'boolean' }, user: { type: 'boolean' }, 'sys-prefix': { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`gpushare jupyter install-kernel takes no arguments, got "${positionals[0]}".`);
  const name = values.name ?? DEFAULT_KERNEL_NAME;
  if (!/^[a-z0-9._-]+$/i.test(name)) throw new UsageError(`--name must be letters, digits, ".", "_" or "-" (Jupyter's rule for kernel names), got "${name}".`);
  if (values.priority !== undefined && !(PRIORITIES as readonly string[]).includes(values.priority)) throw new UsageError(`--priority must be one of ${PRIORITIES.join(', ')}; got "${values.priority}".`);
  let memoryQuotaBytes: number | undefined;
  try {
    memoryQuotaBytes = values.mem === undefined ? undefined : parseByteSize(values.mem);
  } catch (error) {
    throw new UsageError(`--mem: ${(error as Error).message}`);
  }
  if (values.user && values['sys-prefix']) throw new UsageError('--user and --sys-prefix contradict each other: give one.');
  const where = values['sys-prefix'] ? 'sys-prefix' : values.user || euid !== 0 ? 'user' : 'system';

  const library = installedPreloadLibrary(packageRoot());
  const launcher = kernelLauncher();
  const say = (line: string): void => void process.stderr.write(`gpushare jupyter install-kernel: ${line}\n`);
  const check = spawnSync(KERNEL_PYTHON, ['-c', 'import sys, ipykernel_launcher; print(sys.prefix)'], { encoding: 'utf8' });
  if (check.status !== 0) {
    say(`${KERNEL_PYTHON} cannot import ipykernel: install Debian's python3-ipykernel (apt install python3-ipykernel). Nothing was written.`);
    return 1;
  }
  for (const [what, path] of [['the preload library', library], ['the kernel launcher', launcher]]) {
    if (!existsSync(path)) {
      say(`${what} ${path} is missing: build gpushare first (npm run build). Nothing was written.`);
      return 1;
    }
  }
  const dir = join(kernelsDir(where, process.env, check.stdout.trim() || '/usr'), name);
  let spec: Kernelspec;
  try {
    spec = kernelspec({ name, priority: values.priority as Priority | undefined, memoryQuotaBytes, autoPark: values['auto-park'] === true }, { launcher, library });
  } catch (error) {
    say(`${(error as Error).message} Nothing was written.`);
    return 1;
  }
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const file = join(dir, 'kernel.json');
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(spec, null, 1) + '\n', { mode: 0o644 });
  chmodSync(temp, 0o644);
  renameSync(temp, file);
  process.stdout.write(`wrote ${file}: "${spec.display_name}", kernel name ${name}; each kernel started from it enrols as one job at its first CUDA call\n`);
  return 0;
}
