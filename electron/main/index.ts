// The desktop app: the console in a sandboxed window, talking to an engine in its own process
// (the box daemon, or a personal engine it starts and stops). The only place (with
// electron/preload) that imports electron; the sequences themselves are pure modules
// (startup.ts, quit-sequence.ts, tray-host.ts), tested in Node.
import { app, BrowserWindow, dialog, utilityProcess, type WebContents } from 'electron';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { labConsoleHref } from '../../shared/lab-console.js';
import { POINTED_BOX } from '../engine/gpu/simulated-box-names.js';
import { engineSockets } from '../cli/engine-client.js';
import { labSocketDir } from '../cli/commands/lab.js';
import { hubChildOver, type HubChild } from '../engine/lab/hub-process-protocol.js';
import { loadLabList } from '../engine/lab/lab-list.js';
import { packageRoot } from '../engine/paths.js';
import { defaultSocketPath } from '../engine/server/socket-server.js';
import { appFlags, personalEngineCommand } from './app-args.js';
import { CONSOLE_URL, registerAppScheme, serveRenderer } from './app-protocol.js';
import { openEngineLink, type EngineLink } from './engine-link.js';
import { openEngineView, type EngineView } from './engine-view.js';
import { bridgeIpcToEngine, type IpcBridge } from './ipc-bridge.js';
import { desktopLab } from './lab-windows.js';
import { notifyOnAlerts, showNotice } from './notifications.js';
import { printHtmlToPdf } from './pdf-printer.js';
import { quitSequence } from './quit-sequence.js';
import { denyPermissions, lockDownWebContents } from './security.js';
import { startApp } from './startup.js';
import { createTray } from './tray.js';
import { askWatcherOwned, trayHostDecision } from './tray-host.js';
import { labWindowAmong } from './tray-state.js';
import { loadUserConfig, saveConsolePreferences } from '../engine/settings/user-config.js';
import { initialWindowSize, keepWindowSize } from './window-size.js';

const here = dirname(fileURLToPath(import.meta.url));
const assetsDir = join(packageRoot(), 'assets');
const iconPath = join(assetsDir, 'icons', '256x256.png');
const rendererDir = join(packageRoot(), 'dist', 'renderer');
// a personal engine restores parked jobs before it exits; the link kills it after 20 s, this is the last word
const QUIT_WAIT_MS = 25_000;

let window: BrowserWindow | null = null;
/** The window the tray's "Lab…" opened (the console's own window may show the Lab view too). */
let labWindow: BrowserWindow | null = null;
let linkReady: Promise<EngineLink> | null = null;
let link: EngineLink | null = null;
let view: EngineView | null = null;
let bridge: IpcBridge | null = null;
const cleanups: Array<() => void> = [];
let quitting = false;
/** A tray icon is shown: closing the window leaves the app running there. */
let inTray = false;
// the Lab view's hub, in a utility process of its own as the person (their ssh, keys and agent); started when a Lab window first opens
const lab = desktopLab({ readList: () => loadLabList(), forkHub: forkUtilityHub, hubOptions: { socketDir: labSocketDir() } });

/** The hub's process: Electron's utilityProcess, a Node child whose process.parentPort carries our messages. */
function forkUtilityHub(): HubChild {
  const child = utilityProcess.fork(join(here, '..', 'engine', 'lab', 'hub-process-entry.js'), [], { serviceName: 'gpushare lab hub', stdio: ['ignore', 'inherit', 'pipe'] });
  return hubChildOver({
    pid: () => child.pid,
    post: (message) => child.postMessage(message),
    onMessage: (listener) => void child.on('message', listener),
    kill: () => void child.kill(),
    stderr: child.stderr,
    onEnd: (listener) => void child.once('exit', (code) => listener(code, null)),
  });
}

/** A console window on our page (`url`: this box's console, or the Lab view), sandboxed. */
function consoleWindow(url: string, size: { width: number; height: number }): BrowserWindow {
  const opened = new BrowserWindow({
    ...size,
    backgroundColor: '#0f1218',
    title: 'gpushare',
    icon: iconPath,
    webPreferences: {
      preload: join(here, '..', 'preload', 'preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  void opened.loadURL(url);
  return opened;
}

const isOpen = (shown: BrowserWindow | null): shown is BrowserWindow => shown !== null && !shown.isDestroyed();

function showWindow(): void {
  if (!isOpen(window)) {
    const say = (line: string): void => console.error(line);
    const opened = initialWindowSize(() => loadUserConfig().console, say);
    const shown = (window = consoleWindow(CONSOLE_URL, opened));
    shown.on('close', () => {
      const [width, height] = shown.getSize();
      keepWindowSize({ width, height }, opened, (preferences) => void saveConsolePreferences(preferences), say);
    });
  }
  window!.show();
  window!.focus();
}

/** The tray's "Lab…": the window showing the Lab view comes forward, or a Lab window opens beside the console. */
function showLab(): void {
  const open = [window, labWindow].filter(isOpen);
  const at = labWindowAmong(open.map((w) => w.webContents.getURL()));
  const shown = at !== null ? open[at]! : (labWindow = consoleWindow(labConsoleHref(CONSOLE_URL, null), initialWindowSize(() => loadUserConfig().console, (line) => console.error(line))));
  shown.show();
  shown.focus();
}

/** Why a window lost the engine, in the words that fit the engine it had. */
function whyClosed(): string {
  const lost = link?.lostReason();
  if (lost) return lost;
  const where = link?.socketPath ?? 'its socket';
  const who = view?.whoami.engine.kind === 'daemon' ? 'The box daemon' : 'The gpushare engine';
  return `${who} on ${where} closed the connection (it stopped or restarted). Quit and reopen gpushare to connect again.`;
}

function openEngine(): Promise<EngineLink> {
  const flags = appFlags(process.argv, POINTED_BOX);
  linkReady = openEngineLink({
    sockets: engineSockets(process.env).map((socket) => socket.path),
    personalSocket: defaultSocketPath(),
    start: personalEngineCommand(flags, { execPath: process.execPath, root: packageRoot(), compiledTree: join(here, '..', '..'), env: process.env }),
    say: (line) => console.error(`engine: ${line}`),
  });
  const ready = linkReady;
  void ready.then((answering) => {
    link = answering;
    if (!answering.started && (flags.simulate !== undefined || flags.noDemo)) console.error(`gpushare: an engine already answers on ${answering.socketPath}; --simulate and --no-demo apply only to an engine the app starts.`);
  }, () => undefined);
  const isConsole = (contents: WebContents): boolean => [window, labWindow].some((shown) => isOpen(shown) && contents === shown.webContents);
  // reports.export "pdf" from the window: the engine writes the HTML, Chromium here prints it
  bridge = bridgeIpcToEngine({ connect: () => ready.then((answering) => answering.connect()), whyClosed }, lab, isConsole, { printPdf: printHtmlToPdf });
  return ready;
}

async function attachDesktop(answering: EngineLink, engineView: EngineView): Promise<void> {
  view = engineView;
  cleanups.push(answering.onLost((why) => {
    bridge?.engineLost(why);
    showNotice({ title: 'gpushare engine stopped', body: why }, iconPath, showWindow, true);
  }));
  cleanups.push(notifyOnAlerts(engineView, iconPath, showWindow));
  const host = trayHostDecision({ watcherOwned: await askWatcherOwned(), currentDesktop: process.env.XDG_CURRENT_DESKTOP });
  if (!host.tray) {
    console.error(`gpushare: no tray icon: ${host.why}.`);
    return;
  }
  cleanups.push(createTray(engineView, assetsDir, { show: showWindow, showLab, labStatus: () => lab.status(), quit: () => app.quit(), tell: (title, body) => showNotice({ title, body }, iconPath, showWindow) }));
  inTray = true;
}

const onBeforeQuit = quitSequence({
  closeDesktop: () => {
    quitting = true;
    for (const cleanup of cleanups.splice(0)) cleanup();
    bridge?.close();
    lab.close(); // the hub's process, and with it its ssh links
    view?.close();
  },
  // a personal engine we started stops cleanly first (it resumes what it suspended, restores what it parked), even one still starting
  stopEngine: () => (linkReady ? linkReady.then((link) => link.stop(), () => null) : Promise.resolve(null)),
  exit: (code) => app.exit(code),
  say: (line) => console.error(line),
  waitMs: QUIT_WAIT_MS,
});

void startApp<EngineLink, EngineView>({
  requestSingleInstanceLock: () => app.requestSingleInstanceLock(),
  beforeReady: () => {
    registerAppScheme();
    lockDownWebContents();
    app.on('second-instance', showWindow);
    // with a tray icon the app (and its engine) keeps running; without one, closing the window quits
    app.on('window-all-closed', () => void (inTray || app.quit()));
    app.on('before-quit', onBeforeQuit);
  },
  whenReady: () => app.whenReady(),
  prepareConsole: () => {
    const index = join(rendererDir, 'index.html');
    if (!existsSync(index)) throw new Error(`The console is not built: ${index} is missing. In a checkout, npm run build writes it.`);
    denyPermissions();
    serveRenderer(rendererDir);
  },
  openEngine,
  showWindow,
  errorDialog: (title, body) => dialog.showErrorBox(title, body),
  exit: (code) => app.exit(code),
  quitting: () => quitting,
  openView: async (answering) => openEngineView(await answering.connect()),
  closeView: (engineView) => engineView.close(),
  attachDesktop,
  log: (line) => console.error(line),
});
