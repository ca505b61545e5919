// The compiled `gpushare` as a user runs it, on a box of its own: a temporary runtime dir (so the
// personal engine's socket is the test's), a box daemon socket path that nothing listens on unless
// the test puts something there, and no $GPUSHARE_SOCKET from the caller's environment.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_ENV, CLI_PATH } from './compiled-cli.js';

export interface CliRig {
  home: string;
  env: NodeJS.ProcessEnv;
  /** Where this rig's personal engine listens. */
  personalSocket: string;
  /** What the CLI takes for the box daemon's socket ($GPUSHARE_DAEMON_SOCKET). */
  daemonSocket: string;
  gpushare(args: string[], extraEnv?: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }>;
  /** `gpushare serve --simulate SCENARIO` (default a100-40gb), once its socket answers. */
  serve(scenario?: string): Promise<ServedEngine>;
  dispose(): void;
}

export interface ServedEngine {
  child: ChildProcess;
  /** The console URL it printed. */
  url: string;
  /** Its exit code, once it exits. */
  exited: Promise<number | null>;
  output(): string;
}

export function cliRig(name: string): CliRig {
  const home = mkdtempSync(join(tmpdir(), `gpushare-${name}-`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...CLI_ENV,
    XDG_RUNTIME_DIR: home,
    XDG_STATE_HOME: join(home, 'state'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CONFIG_HOME: join(home, 'config'), // never the settings of whoever runs the tests
    GPUSHARE_DAEMON_SOCKET: join(home, 'daemon.sock'),
  };
  delete env.GPUSHARE_SOCKET;
  const started: ChildProcess[] = [];
  return {
    home,
    env,
    personalSocket: join(home, 'gpushare', 'engine.sock'),
    daemonSocket: join(home, 'daemon.sock'),
    gpushare: (args, extraEnv = {}) =>
      new Promise((resolve) => {
        execFile(process.execPath, [CLI_PATH, ...args], { env: { ...env, ...extraEnv }, cwd: home }, (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      }),
    async serve(scenario = 'a100-40gb') {
      const child = spawn(process.execPath, [CLI_PATH, 'serve', '--simulate', scenario, '--rate', '10'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      started.push(child);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => {
          output += d.toString();
          const printed = /gpushare console: (\S+)[^\n]*\nengine socket:/.exec(output);
          if (printed) resolve(printed[1]);
        });
        child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
        void exited.then((code) => reject(new Error(`gpushare serve exited (${code}): ${output}`)));
      });
      return { child, url, exited, output: () => output };
    },
    dispose() {
      for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    },
  };
}
