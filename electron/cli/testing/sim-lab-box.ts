// A lab of one box for a CLI test file: `gpushare serve --simulate SCENARIO` on a socket of its own,
// named "sim" in the person's own lab list, and the compiled CLI run as that person (a home, runtime,
// state and data folder of the file's own, and no admin lab list).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { CLI_ENV, CLI_PATH } from './compiled-cli.js';

export interface SimLabBox {
  home: string;
  env: NodeJS.ProcessEnv;
  gpushare(args: string[], extraEnv?: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** The box, started before the file's tests and stopped after them (its folder removed). */
export function useSimLabBox(scenario: string, prefix: string): SimLabBox {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const env: NodeJS.ProcessEnv = { ...process.env, ...CLI_ENV, HOME: home, XDG_RUNTIME_DIR: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data'), GPUSHARE_LAB_FILE: join(home, 'no-admin-lab.json') };
  delete env.XDG_CONFIG_HOME;
  let engine: ChildProcess | null = null;

  before(async () => {
    const served = spawn(process.execPath, [CLI_PATH, 'serve', '--simulate', scenario, '--rate', '10'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    engine = served;
    let output = '';
    const socket = await new Promise<string>((resolve, reject) => {
      served.stdout!.on('data', (d: Buffer) => {
        output += d.toString();
        const path = /engine socket: (\S+)/.exec(output)?.[1];
        if (path) resolve(path);
      });
      served.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      served.once('exit', (code) => reject(new Error(`gpushare serve exited (${code}): ${output}`)));
    });
    mkdirSync(join(home, '.config', 'gpushare'), { recursive: true });
    writeFileSync(join(home, '.config', 'gpushare', 'lab.json'), JSON.stringify({ boxes: [{ name: 'sim', socket }] }));
  });

  after(async () => {
    if (engine && engine.exitCode === null) {
      const exited = new Promise((r) => engine!.once('exit', r));
      engine.kill('SIGTERM');
      await exited;
    }
    rmSync(home, { recursive: true, force: true });
  });

  return {
    home,
    env,
    gpushare: (args, extraEnv = {}) =>
      new Promise((resolve) => {
        execFile(process.execPath, [CLI_PATH, ...args], { env: { ...env, ...extraEnv }, cwd: home }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
      }),
  };
}
