// `gpushare start`: the desktop app; where Electron's binary is missing, the browser
// console on loopback instead (the engine in this process, the demo on simulated GPUs).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openConsoleHost } from '../../engine/console-host.js';
import { POINTED_BOX } from '../../engine/gpu/simulated-box-names.js';
import { packageRoot } from '../../engine/paths.js';
import { serveConsoleOnLoopback } from '../../engine/server/web-server.js';
import { labConsoleSessions } from '../../engine/lab/lab-console-sessions.js';
import { LabHub } from '../../engine/lab/lab-hub.js';
import { labConsoleHref } from '../../../shared/lab-console.js';
import { labBoxes, labSocketDir } from './lab.js';
import { parseFlags, UsageError } from '../args.js';
import { findEngine } from '../engine-client.js';
import { consoleCommand } from './console.js';
import { openInBrowser } from '../open-browser.js';
import { metricsOption } from '../metrics-option.js';
import { engineDefaults } from '../user-settings.js';
import { desktopElectron } from '../desktop-launch.js';
import { runElectronInstaller } from '../electron-fetch.js';
import { sandboxFacts } from '../electron-sandbox.js';
import { labelSuffix } from '../../engine/gpu/gpu-backend.js';

/** The Electron executable if its binary was downloaded, read without importing electron. */
export function electronBinary(root = packageRoot()): string | null {
  if (process.versions.electron) return process.execPath; // the installed package: its own Electron, running this CLI as Node
  const dir = join(root, 'node_modules', 'electron');
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return null;
  const executable = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(executable) ? executable : null;
}

export async function startCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { simulate: { type: 'string' }, browser: { type: 'boolean' }, port: { type: 'string' }, 'no-demo': { type: 'boolean' }, 'no-sandbox': { type: 'boolean' }, metrics: { type: 'string' }, lab: { type: 'boolean' } },
    { simulate: POINTED_BOX },
  );
  if (positionals.length > 0) throw new UsageError(`gpushare start takes no arguments, got "${positionals[0]}".`);
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (0-65535), got "${values.port}".`);
  if (values.lab) {
    const engineFlags = (['simulate', 'no-demo', 'metrics', 'browser', 'no-sandbox'] as const).filter((flag) => argv.includes(`--${flag}`));
    if (engineFlags.length > 0) throw new UsageError(`--lab starts no engine and always serves the browser console: drop --${engineFlags.join(', --')}.`);
    return startLab(port);
  }
  const defaults = engineDefaults(); // the person's config file; a flag wins
  const metrics = metricsOption(values.metrics ?? defaults.metrics);

  if (!values.browser) {
    const say = (line: string): void => void process.stderr.write(line + '\n');
    const electronDir = join(packageRoot(), 'node_modules', 'electron');
    const electron = await desktopElectron({
      env: process.env,
      find: () => electronBinary(),
      fetch: () => runElectronInstaller({ electronDir, say }),
      sandboxFacts: (executable) => sandboxFacts(executable, argv),
      say,
    });
    if (electron) return runDesktop(electron, argv);
  }

  const metricsAsked = values.metrics !== undefined; // on the command line: the config file's default is no request to warn about
  const running = await consoleOfRunningEngine(values.port, values.simulate !== undefined || values['no-demo'] === true || metricsAsked, metricsAsked);
  if (running !== null) return running;

  const host = await openConsoleHost({ simulate: values.simulate, demo: !values['no-demo'], metrics, rateHz: defaults.rateHz, db: defaults.db, autoParkIdleSeconds: defaults.autoParkIdleSeconds, boxName: defaults.boxName, web: { port }, say: (line) => process.stderr.write(line + '\n') });
  const web = host.web!;
  const simulated = labelSuffix(host.backend.label);
  process.stdout.write(`gpushare console: ${web.url}${simulated}\nengine socket: ${host.socketPath}\n`);
  const page = openInBrowser(web.url);

  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve());
    host.engine.setHost({ stop: resolve, consoleUrl: web.url }); // `gpushare stop` ends it as SIGTERM does
  });
  page.dispose();
  await host.close();
  return 0;
}

/** The Lab view on loopback: the hub (one link per box, as this person) and each box's console through it. */
async function startLab(port: number): Promise<number> {
  const boxes = labBoxes();
  const hub = new LabHub(boxes, { socketDir: labSocketDir() });
  hub.start();
  const sessions = labConsoleSessions(hub);
  const web = await serveConsoleOnLoopback(sessions, { port }).catch((error: unknown) => {
    sessions.close(); // the hub's links and the view's timer would keep this process up after the error
    hub.close();
    throw error;
  });
  const url = labConsoleHref(web.url, null);
  process.stdout.write(`gpushare lab console: ${url}\nboxes: ${boxes.map((b) => b.name).join(', ')}\n`);
  const page = openInBrowser(url);
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve());
  });
  page.dispose();
  await web.close();
  sessions.close();
  hub.close();
  return 0;
}

function runDesktop(executable: string, argv: string[]): Promise<number> {
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE; // how the packaged CLI runs: the app itself must run as Electron
  const child = spawn(executable, [packageRoot(), ...argv], { stdio: 'inherit', env });
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
}

/**
 * An engine already answers (the box daemon, or your own): open its console through your own proxy
 * (`gpushare console`) instead of starting a second engine. Null when none answers.
 */
async function consoleOfRunningEngine(port: string | undefined, engineFlags: boolean, metricsFlag: boolean): Promise<number | null> {
  const found = await findEngine().catch(() => null);
  if (!found) return null;
  found.client.close();
  const ignored = engineFlags ? ` (--simulate${metricsFlag ? ', --no-demo and --metrics' : ' and --no-demo'} apply only to an engine it starts)` : '';
  process.stderr.write(`${found.socket.label[0].toUpperCase()}${found.socket.label.slice(1)} answers on ${found.socket.path}, so gpushare start opens its console instead of starting an engine${ignored}.\n`);
  return consoleCommand(['--socket', found.socket.path, ...(port === undefined ? [] : ['--port', port])]);
}
