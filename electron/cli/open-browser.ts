// Hands the console URL to the desktop's browser without putting its token on a command line
// (every local user can read /proc/PID/cmdline): the opener gets the path of a 0600 page in this
// user's runtime dir that redirects to the URL.
import { spawn, spawnSync } from 'node:child_process';
import { openSync, closeSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, runtimeDir } from '../engine/paths.js';

export interface BrowserOpenerHost {
  env: NodeJS.ProcessEnv;
  /** Where the redirect page goes (default: runtimeDir(), created 0700). */
  dir: string;
  /** Is this command on PATH? */
  has(command: string): boolean;
  /** Start the opener from argv, never through a shell, and do not wait for it. */
  spawn(command: string, args: string[]): void;
  /** Why the browser was not opened, where the user should hear it (the URL is printed anyway). */
  warn(line: string): void;
}

export interface OpenedBrowser {
  /** The redirect page given to the opener, or null where nothing was opened (no display, no xdg-open). */
  page: string | null;
  /** Removes the page (it carries the token): call when the console stops. */
  dispose(): void;
}

const systemHost = (): BrowserOpenerHost => ({
  env: process.env,
  dir: runtimeDir(),
  has: (command) => spawnSync('sh', ['-c', 'command -v "$1"', 'sh', command], { stdio: 'ignore' }).status === 0,
  spawn: (command, args) => void spawn(command, args, { stdio: 'ignore', detached: true }).on('error', () => undefined).unref(),
  warn: (line) => void process.stderr.write(line + '\n'),
});

/** Opens url in the desktop's browser where there is one; the caller prints it either way. */
export function openInBrowser(url: string, host: Partial<BrowserOpenerHost> = {}): OpenedBrowser {
  const { env, dir, has, spawn: start, warn } = { ...systemHost(), ...host };
  const nothing: OpenedBrowser = { page: null, dispose: () => undefined };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return nothing;
  if (!has('xdg-open')) return nothing;
  let page: string;
  try {
    page = writeRedirectPage(dir, url);
  } catch (error) {
    warn(`Not opening a browser: ${error instanceof Error ? error.message : String(error)} Open the URL yourself.`);
    return nothing;
  }
  start('xdg-open', [page]);
  return { page, dispose: () => rmSync(page, { force: true }) };
}

/** A page only this user can read that sends the browser on to url; its path is safe to show anyone. */
export function writeRedirectPage(dir: string, url: string): string {
  ensurePrivateDir(dir); // /tmp/gpushare-UID (no XDG_RUNTIME_DIR) could have been made by someone else first
  const page = join(dir, `console-${process.pid}.html`);
  rmSync(page, { force: true });
  const fd = openSync(page, 'wx', 0o600); // wx: a fresh file, never one someone placed there
  try {
    writeSync(fd, redirectHtml(url));
  } finally {
    closeSync(fd);
  }
  return page;
}

function redirectHtml(url: string): string {
  const attr = url.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const script = JSON.stringify(url).replace(/</g, '\\u003c');
  return `<!doctype html>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0; url=${attr}">
<title>gpushare console</title>
<script>location.replace(${script});</script>
<p>Opening the <a href="${attr}">gpushare console</a>…</p>
`;
}
