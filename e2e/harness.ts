// The real engine on a simulated GPU, in this process, and Debian's Chromium pointed at
// its browser console. Shared by the end-to-end tests.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '../electron/testing/until.js';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Engine } from '../electron/engine/engine.js';
import { openGpuBackend, type GpuBackend } from '../electron/engine/gpu/open-backend.js';
import type { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';
import { packageRoot } from '../electron/engine/paths.js';
import { startDemo, type Demo } from '../electron/engine/demo.js';
import { attachScheduler, type AttachedScheduler } from '../electron/engine/scheduler/attach.js';
import type { LabPolicy } from '../shared/lab-policy.js';
import { attachUsageStore } from '../electron/engine/store/attach.js';
import { UsageStore } from '../electron/engine/store/usage-store.js';
import { ownerConfigFile, registerSettingsCommands } from '../electron/engine/settings/settings-commands.js';
import { listenOnSocket } from '../electron/engine/server/socket-server.js';
import { listenOnLoopback, type WebServer } from '../electron/engine/server/web-server.js';

export const CHROMIUM = '/usr/bin/chromium';
export const RESULTS_DIR = join(packageRoot(), 'test-results');
/** This file is <tree>/e2e/harness.js: the compiled tree the CLI should run from. */
const COMPILED_TREE = join(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The console the browser loads: $GPUSHARE_E2E_RENDERER (a console built elsewhere, e.g. vite --outDir
 * dist-NAME/renderer), served to the page in place of the web server's dist/renderer; the API stays the server's.
 */
const RENDERER_OVERRIDE = process.env.GPUSHARE_E2E_RENDERER || null;
const rendererDir = (): string => RENDERER_OVERRIDE ?? join(packageRoot(), 'dist', 'renderer');

/** Why the browser tests cannot run here, or null when they can. */
export function browserMissing(): string | null {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (apt-get install -y chromium)`;
  if (!existsSync(join(rendererDir(), 'index.html'))) return `the console is not built (npm run build:renderer; looked in ${rendererDir()})`;
  return null;
}

const STATIC_TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2' };

/** Serve the page's static files from RENDERER_OVERRIDE (the WebSocket API is not routed: it stays the engine's). */
async function routeRenderer(page: Page, web: WebServer): Promise<void> {
  if (!RENDERER_OVERRIDE) return;
  const root = normalize(RENDERER_OVERRIDE);
  await page.route(`http://127.0.0.1:${web.port}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/api') return route.continue(); // the engine's own answer (the console's token check)
    let file = normalize(join(root, decodeURIComponent(url.pathname)));
    if (!file.startsWith(root + sep) || !existsSync(file) || extname(file) === '') file = join(root, 'index.html');
    await route.fulfill({ status: 200, contentType: STATIC_TYPES[extname(file)] ?? 'application/octet-stream', body: readFileSync(file) });
  });
}

export function launchChromium(): Promise<Browser> {
  // a page fulfilled by a route has no address space: Chromium would then block its WebSocket to loopback
  const routed = RENDERER_OVERRIDE ? ['--disable-features=LocalNetworkAccessChecks'] : [];
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', ...routed] });
}

export interface ConsoleHarness {
  dir: string;
  backend: GpuBackend;
  driver: SimulatedDriver;
  engine: Engine;
  scheduler: AttachedScheduler | null;
  /** The usage store behind reports.query, when asked for. */
  usage: UsageStore | null;
  demo: Demo | null;
  web: WebServer;
  browser: Browser;
  page: Page;
  /** `gpushare ARGS…` against this engine (its unix socket), parsed as JSON. */
  cli(args: string[]): Promise<unknown>;
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Record usage in a store in the test's directory (reports.query, reports.export). */
  usage?: boolean;
  /** Start the demo jobs of `gpushare start` (startDemo). */
  demo?: boolean;
  /** The lab policy the scheduler applies (as the box daemon's); absent: none, as in a personal engine. */
  labPolicy?: LabPolicy;
}

export async function openConsoleHarness(scenario = 'a100-40gb', options: HarnessOptions = {}): Promise<ConsoleHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-e2e-'));
  process.env.XDG_RUNTIME_DIR = dir; // the simulated box and the engine socket live here
  const backend = await openGpuBackend({ simulate: scenario });
  const engine = new Engine(backend, { rateHz: 2 });
  const socket = await listenOnSocket(engine);
  const scheduler = attachScheduler(engine, { backend, stateDir: join(dir, 'state'), runtimeDir: dir, guardian: false, terminateGraceMs: 300, labPolicy: options.labPolicy });
  registerSettingsCommands(engine.dispatcher, ownerConfigFile(engine.owner.uid, join(dir, 'config', 'gpushare', 'config.json'))); // the console's choices: the test's, never the tester's
  const usage = options.usage ? await UsageStore.open({ path: join(dir, 'usage.db'), flushIntervalMs: 200 }) : null;
  if (usage) attachUsageStore(engine, usage, { ownership: scheduler.scheduler.ownership });
  const web = await listenOnLoopback(engine);
  engine.start();
  const demo = options.demo ? await startDemo(engine, backend.simulated!) : null;
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  page.on('pageerror', (error) => console.error('page error:', error.message));
  await routeRenderer(page, web);
  mkdirSync(RESULTS_DIR, { recursive: true });
  return {
    dir,
    backend,
    driver: backend.simulated!,
    engine,
    scheduler,
    usage,
    demo,
    web,
    browser,
    page,
    cli(args) {
      // asynchronous: the engine that answers lives in this process
      return new Promise((resolve, reject) => {
        execFile(process.execPath, [join(packageRoot(), 'electron', 'cli', 'gpushare.js'), ...args], { env: { ...process.env, GPUSHARE_DIST: COMPILED_TREE, XDG_RUNTIME_DIR: dir } }, (error, stdout, stderr) => {
          if (error) reject(new Error(`gpushare ${args.join(' ')} failed: ${stderr || error.message}`));
          else resolve(JSON.parse(stdout));
        });
      });
    },
    async screenshot(name) {
      const path = join(RESULTS_DIR, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await browser.close();
      await demo?.stop();
      const live = (await engine.call('jobs.list', {})).filter((j) => j.managed);
      await Promise.allSettled(live.map((j) => engine.call('jobs.terminate', { job: j.id })));
      await eventually(async () => (await engine.call('jobs.list', {})).every((j) => !j.managed), 5000, 'the managed jobs to end').catch(() => undefined);
      await scheduler.stop(); // every restore awaited before the box goes
      engine.stop();
      await Promise.all([web.close(), socket.close(), usage?.close()]);
      await backend.simulated?.dispose();
      backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll until `probe` returns a truthy value (returned), or fail after `timeoutMs`: the tests' one wait, `until`. */
export async function eventually<T>(probe: () => T | Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>> {
  return (await until(what, async () => (await probe()) || undefined, { timeoutMs, intervalMs: 200 })) as NonNullable<T>;
}
