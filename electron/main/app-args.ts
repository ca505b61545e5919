// The desktop app's own flags (as `gpushare start` passes them on) and the personal engine it starts from them.
import { join } from 'node:path';
import type { EngineCommand } from './engine-link.js';

export interface AppFlags {
  /** A scenario forces simulated GPUs; undefined: the real driver where there is one. */
  simulate?: string;
  noDemo: boolean;
  /** `--metrics [ADDR:]PORT`, passed on as given: the engine checks it (and says what is wrong). */
  metrics?: string;
}

/** `--simulate [SCENARIO]`, `--no-demo` and `--metrics VALUE` among Electron's and Chromium's own arguments. */
export function appFlags(argv: readonly string[], defaultScenario: string): AppFlags {
  const at = argv.indexOf('--simulate');
  const next = at >= 0 ? argv[at + 1] : undefined;
  const simulate = at < 0 ? undefined : next && !next.startsWith('-') ? next : defaultScenario;
  const metricsAt = argv.indexOf('--metrics');
  const metrics = metricsAt >= 0 ? argv[metricsAt + 1] : undefined;
  return { simulate, noDemo: argv.includes('--no-demo'), ...(metrics === undefined ? {} : { metrics }) };
}

export interface EngineRuntime {
  /** The binary that runs the engine: Electron's own, as Node (ELECTRON_RUN_AS_NODE), or node itself. */
  execPath: string;
  /** The package root (electron/cli/gpushare.js lives under it). */
  root: string;
  /** The compiled tree this app runs from, so the engine is the same build (GPUSHARE_DIST). */
  compiledTree: string;
  env: NodeJS.ProcessEnv;
}

/** `gpushare engine` in its own process, stopping with the app even when the app is killed (its stdin ends). */
export function personalEngineCommand(flags: AppFlags, runtime: EngineRuntime): EngineCommand {
  const args = [join(runtime.root, 'electron', 'cli', 'gpushare.js'), 'engine', '--until-stdin-closes'];
  if (flags.simulate !== undefined) args.push('--simulate', ...(flags.simulate ? [flags.simulate] : [])); // bare: the box this shell points at
  if (flags.noDemo) args.push('--no-demo');
  if (flags.metrics !== undefined) args.push('--metrics', flags.metrics);
  return { command: runtime.execPath, args, env: { ...runtime.env, ELECTRON_RUN_AS_NODE: '1', GPUSHARE_DIST: runtime.compiledTree } };
}
