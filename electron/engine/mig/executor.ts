// MIG changes, one interface: run `nvidia-smi mig` command lines (real), apply them to the simulated
// driver's state (simulated), or only print them (dry run). Argument arrays, never a shell.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fakegpuBuildDir } from '../paths.js';
import type { MigCommand } from './commands.js';
import { toolEnvironment } from '../root-env.js';

export const NEEDS_ROOT = 'needs root: run the engine as root or apply the printed commands with sudo';

export interface MigRunResult {
  ok: boolean;
  /** Commands that succeeded, in order. */
  done: number;
  /** What each command printed. */
  output: string[];
  /** The command that failed and why, when one did. */
  failure?: string;
}

export interface MigExecutor {
  readonly kind: 'real' | 'simulated' | 'dry-run';
  /** Why this executor may not change MIG here (not root), or null when it may. */
  privilegeProblem(): string | null;
  /** Run the commands in order, stopping at the first that fails. */
  run(commands: MigCommand[]): Promise<MigRunResult>;
}

type Runner = (argv: string[]) => Promise<string>;

async function runAll(commands: MigCommand[], runner: Runner): Promise<MigRunResult> {
  const output: string[] = [];
  for (const [i, command] of commands.entries()) {
    try {
      output.push((await runner(command.argv)).trim());
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return { ok: false, done: i, output, failure: `\`${command.argv.join(' ')}\` failed: ${why}` };
    }
  }
  return { ok: true, done: commands.length, output };
}

function execArgv(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: 60_000, env: toolEnvironment() }, (error, stdout, stderr) => {
      if (error) reject(new Error((String(stderr).replace(/^fakegpu: /, '').trim() || String(stdout).trim() || error.message).split('\n')[0]));
      else resolve(String(stdout));
    });
  });
}

const rootProblem = (euid: number): string | null => (euid === 0 ? null : NEEDS_ROOT);

/** The NVIDIA driver: runs nvidia-smi as given. euid is the engine's (injectable for tests). */
export class RealMigExecutor implements MigExecutor {
  readonly kind = 'real' as const;
  constructor(private readonly options: { euid?: number; smi?: string } = {}) {}

  privilegeProblem(): string | null {
    return rootProblem(this.options.euid ?? process.geteuid?.() ?? 0);
  }

  run(commands: MigCommand[]): Promise<MigRunResult> {
    return runAll(commands, (argv) => execArgv(argv[0] === 'nvidia-smi' ? (this.options.smi ?? 'nvidia-smi') : argv[0], argv.slice(1)));
  }
}

/**
 * The simulated driver: each `nvidia-smi mig` line becomes a `fakegpu mig` call on the state file, which
 * checks placements and refuses busy instances as the driver does. The simulated GPUs have no privileges
 * of their own, so euid defaults to 0 (anyone may repartition them); pass the real one to test refusals.
 */
export class SimulatedMigExecutor implements MigExecutor {
  readonly kind = 'simulated' as const;
  constructor(private readonly options: { statePath: string; euid?: number }) {}

  privilegeProblem(): string | null {
    return rootProblem(this.options.euid ?? 0);
  }

  run(commands: MigCommand[]): Promise<MigRunResult> {
    const fakegpu = join(fakegpuBuildDir(), 'fakegpu');
    return runAll(commands, (argv) => execArgv(fakegpu, ['mig', '--state', this.options.statePath, ...toFakegpu(argv)]));
  }
}

/** Prints, changes nothing. */
export class DryRunMigExecutor implements MigExecutor {
  readonly kind = 'dry-run' as const;
  privilegeProblem(): string | null {
    return null;
  }
  async run(commands: MigCommand[]): Promise<MigRunResult> {
    return { ok: true, done: 0, output: commands.map((c) => c.argv.join(' ')) };
  }
}

/** `nvidia-smi mig -i 1 -dci -gi 2 -ci 0` → `--device 1 destroy-ci 2 0`, and so on for -dgi, -cci, -cgi [-C]. */
export function toFakegpu(argv: string[]): string[] {
  if (argv[0] !== 'nvidia-smi' || argv[1] !== 'mig') throw new Error(`not an nvidia-smi mig command: ${argv.join(' ')}`);
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const device = value('-i');
  if (device === undefined) throw new Error(`no -i GPU in ${argv.join(' ')}`);
  const at = ['--device', device];
  if (argv.includes('-dci')) return [...at, 'destroy-ci', value('-gi')!, value('-ci')!];
  if (argv.includes('-dgi')) return [...at, 'destroy-gi', value('-gi')!];
  if (argv.includes('-cci')) return [...at, 'create-ci', value('-gi')!];
  const spec = value('-cgi');
  if (spec !== undefined) return [...at, 'create-gi', spec, ...(argv.includes('-C') ? ['-C'] : [])];
  throw new Error(`unsupported nvidia-smi mig command: ${argv.join(' ')}`);
}
