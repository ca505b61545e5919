// A real engine in a child process (`gpushare serve` on the simulated driver), so a test sees it die:
// its console URL (with the token), its socket, its memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_ENV, CLI_PATH } from '../../../cli/testing/compiled-cli.js';

export interface EngineChild {
  pid: number;
  consoleUrl: string;
  port: number;
  token: string;
  socketPath: string;
  /** Why it exited (code or signal), or null while it runs. */
  exited(): string | null;
  /** Resolves with why, when it exits. */
  whenExited: Promise<string>;
  /** Resident memory (VmRSS), bytes. */
  rss(): number;
  /** What it wrote to stderr (the last 64 KB). */
  stderr(): string;
  stop(): Promise<void>;
}

/** `gpushare serve --simulate SCENARIO` with its runtime, state and data under dir. */
export async function startEngineChild(dir: string, scenario = 'a100-40gb'): Promise<EngineChild> {
  const env = { ...process.env, ...CLI_ENV, XDG_RUNTIME_DIR: dir, XDG_STATE_HOME: join(dir, 'state'), XDG_DATA_HOME: join(dir, 'data') };
  const child: ChildProcess = spawn(process.execPath, [CLI_PATH, 'serve', '--simulate', scenario, '--rate', '2', '--db', join(dir, 'usage.db')], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let exit: string | null = null;
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-64 * 1024)));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = signal ? `killed by ${signal}` : `exited with code ${code}`;
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => (stdout += chunk).includes('engine socket:') && resolve());
    void exited.then(() => reject(new Error(`gpushare serve ${exit} before it served: ${stdout}${stderr}`)));
  });
  const consoleUrl = /gpushare console: (\S+)/.exec(stdout)![1];
  const url = new URL(consoleUrl);
  return {
    pid: child.pid!,
    consoleUrl,
    port: Number(url.port),
    token: url.searchParams.get('token')!,
    socketPath: /engine socket: (\S+)/.exec(stdout)![1],
    exited: () => exit,
    whenExited: exited.then(() => exit!),
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) * 1024,
    stderr: () => stderr,
    async stop() {
      if (exit) return;
      child.kill('SIGTERM');
      const killAfter = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(killAfter);
    },
  };
}
