// Getting Electron's binary: npm does not run electron's install script (allowScripts denies it), so
// `gpushare start` runs it itself when the binary is missing, for a bounded time, and otherwise says in
// one sentence why the browser console opens instead.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readLines } from '../engine/server/read-lines.js';

/** How a fetch ended: ok, or why not in a phrase ("install.js exited with code 1: …"). */
export type FetchOutcome = { ok: true } | { ok: false; why: string };

export interface ElectronSource {
  /** The executable if it is there now. */
  find(): string | null;
  /** Try to bring it (the network may be out of reach). */
  fetch(): Promise<FetchOutcome>;
  say(line: string): void;
}

export type ElectronResult = { executable: string } | { executable: null; why: string };

/** The executable, fetched first when missing; else why there is none, as a phrase. */
export async function ensureElectron(source: ElectronSource): Promise<ElectronResult> {
  const present = source.find();
  if (present) return { executable: present };
  source.say('Electron\'s binary is not downloaded yet; fetching it once (about 100 MB)…');
  const outcome = await source.fetch();
  const fetched = source.find();
  if (fetched) return { executable: fetched };
  return { executable: null, why: outcome.ok ? 'its installer finished but left no binary in node_modules/electron/dist' : outcome.why };
}

/** The browser fallback's one sentence. */
export const fallbackSentence = (why: string): string => `Electron's binary could not be fetched (${why}), so gpushare opens the browser console instead.`;

export interface InstallerOptions {
  /** node_modules/electron (its install.js downloads and unpacks dist/). */
  electronDir: string;
  /** The Node binary to run it with. */
  node?: string;
  timeoutMs?: number;
  /** Each line it prints (its progress and errors). */
  say(line: string): void;
  env?: NodeJS.ProcessEnv;
}

const ERROR_LINES_KEPT = 2;

/** Runs electron's own install.js as a child, killed past the time limit. */
export function runElectronInstaller(options: InstallerOptions): Promise<FetchOutcome> {
  const script = join(options.electronDir, 'install.js');
  if (!existsSync(script)) return Promise.resolve({ ok: false, why: `${script} is missing: run npm install first` });
  const timeoutMs = options.timeoutMs ?? 120_000;
  const child = spawn(options.node ?? process.execPath, [script], { cwd: options.electronDir, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  const hear = (line: string): void => {
    const text = line.trim();
    // the error's first line says what went wrong; the stack below it does not
    if (!text || /^at /.test(text)) return;
    options.say(`  electron install: ${text}`);
    tail.push(text);
    if (tail.length > ERROR_LINES_KEPT) tail.shift();
  };
  const readers = [readLines(child.stdout!, hear), readLines(child.stderr!, hear)];
  return new Promise((resolve) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ ok: false, why: `its installer could not run: ${error.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      for (const reader of readers) hear(reader.rest()); // a last line without its newline
      if (timedOut) resolve({ ok: false, why: `its download did not finish within ${timeoutMs / 1000} s` });
      else if (code === 0) resolve({ ok: true });
      else resolve({ ok: false, why: `install.js ${signal ? `was killed by ${signal}` : `exited with code ${code}`}${tail.length ? `: ${tail.join(' ')}` : ''}` });
    });
  });
}
