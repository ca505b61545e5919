// A simulated box for tests that need several: `gpushare serve --simulate SCENARIO` as a process of
// its own, with a home of its own (config, runtime dir, data), its engine socket and, when asked,
// its metrics endpoint. stop() ends it and waits for its guardian, so its folder can be removed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_ENV, CLI_PATH } from './compiled-cli.js';

export interface ServeBox {
  name: string;
  home: string;
  /** Its engine's unix socket. */
  socketPath: string;
  /** HOST:PORT of its metrics endpoint, when started with metrics. */
  metricsTarget: string | null;
  /** Its environment, for `gpushare` commands against it. */
  env: NodeJS.ProcessEnv;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface ServeBoxOptions {
  /** engine.* settings written to its config file (boxName, …). */
  engine?: Record<string, unknown>;
  metrics?: boolean;
  demo?: boolean;
}

/** `gpushare serve` on `scenario` under root/name; resolves once its socket (and metrics) answer. */
export async function startServeBox(root: string, name: string, scenario: string, options: ServeBoxOptions = {}): Promise<ServeBox> {
  const home = join(root, name);
  mkdirSync(join(home, 'config', 'gpushare'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home, 'config', 'gpushare', 'config.json'), JSON.stringify({ engine: options.engine ?? {} }));
  const env: NodeJS.ProcessEnv = { ...process.env, ...CLI_ENV, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_RUNTIME_DIR: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data'), GPUSHARE_DAEMON_SOCKET: join(home, 'no-daemon.sock') };
  delete env.GPUSHARE_SOCKET;
  const args = ['serve', '--simulate', scenario, '--db', join(home, 'usage.db'), ...(options.metrics ? ['--metrics', '127.0.0.1:0'] : [])];
  const child = spawn(process.execPath, [CLI_PATH, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const ready = await new Promise<{ socket: string; metrics: string | null }>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const socket = /^engine socket: (.+)$/m.exec(output)?.[1];
      const metrics = /^metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)$/m.exec(output)?.[1] ?? null;
      if (socket && (!options.metrics || metrics)) resolve({ socket, metrics });
    });
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => reject(new Error(`gpushare serve (${name}) exited (${code}): ${output}`)));
  });
  return {
    name,
    home,
    socketPath: ready.socket,
    metricsTarget: ready.metrics ? new URL(ready.metrics).host : null,
    env,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await processesGone(home); // its guardian (its record is under home) writes its last word after the engine
    },
  };
}

/** Until no process names `path` in its command line (bounded: 20 s). */
export async function processesGone(path: string): Promise<void> {
  const naming = (): number[] =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(path);
        } catch {
          return false; // gone meanwhile
        }
      })
      .map(Number);
  for (const deadline = Date.now() + 20_000; naming().length > 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
}
