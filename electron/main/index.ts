// The desktop app: the console in a sandboxed window, talking to an engine in its own process
// (the box daemon, or a personal engine it starts and stops). The only place (with
// electron/preload) that imports electron; the sequence itself is in pure modules.
import { app, BrowserWindow, dialog } from 'electron';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SCENARIO } from '../engine/gpu/open-backend.js';
import { engineSockets } from '../cli/engine-client.js';
import { packageRoot } from '../engine/paths.js';
import { defaultSocketPath } from '../engine/server/socket-server.js';
import { appFlags, personalEngineCommand } from './app-args.js';
import { CONSOLE_URL, registerAppScheme, serveRenderer } from './app-protocol.js';
import { openEngineLink, type EngineLink } from './engine-link.js';
import { openEngineView, type EngineView } from './engine-view.js';
import { bridgeIpcToEngine, type IpcBridge } from './ipc-bridge.js';
import { notifyOnAlerts, showNotice } from './notifications.js';
import { denyPermissions, lockDownWebContents } from './security.js';
import { createTray } from './tray.js';

const here = dirname(fileURLToPath(import.meta.url));
const assetsDir = join(packageRoot(), 'assets');
const iconPath = join(assetsDir, 'icon.png');

let window: BrowserWindow | null = null;
let linkReady: Promise<EngineLink> | null = null;
let link: EngineLink | null = null;
let view: EngineView | null = null;
let bridge: IpcBridge | null = null;
const cleanups: Array<() => void> = [];
let quitting = false;

function showWindow(): void {
  if (!window || window.isDestroyed()) {
    window = new BrowserWindow({
      width: 1440,
      height: 920,
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
    void window.loadURL(CONSOLE_URL);
  }
  window.show();
  window.focus();
}

/** Why a window lost the engine, in the words that fit the engine it had. */
function whyClosed(): string {
  const lost = link?.lostReason();
  if (lost) return lost;
  const where = link?.socketPath ?? 'its socket';
  const who = view?.whoami.engine.kind === 'daemon' ? 'The box daemon' : 'The gpushare engine';
  return `${who} on ${where} closed the connection (it stopped or restarted). Quit and reopen gpushare to connect again.`;
}

async function start(): Promise<void> {
  denyPermissions();
  serveRenderer(join(packageRoot(), 'dist', 'renderer'));
  const personalSocket = defaultSocketPath();
  linkReady = openEngineLink({
    sockets: engineSockets(process.env).map((socket) => socket.path),
    personalSocket,
    start: personalEngineCommand(appFlags(process.argv, DEFAULT_SCENARIO), { execPath: process.execPath, root: packageRoot(), compiledTree: join(here, '..', '..'), env: process.env }),
    say: (line) => console.error(`engine: ${line}`),
  });
  // the window first: it says "connecting…" while a personal engine starts
  const ready = linkReady;
  bridge = bridgeIpcToEngine({ connect: () => ready.then((l) => l.connect()), whyClosed }, (contents) => window !== null && !window.isDestroyed() && contents === window.webContents);
  showWindow();
  try {
    link = await ready;
  } catch (error) {
    dialog.showErrorBox('gpushare could not start its engine', error instanceof Error ? error.message : String(error));
    app.exit(1);
    return;
  }
  if (quitting) return; // before-quit stops it
  cleanups.push(link.onLost((why) => {
    bridge?.engineLost(why);
    showNotice({ title: 'gpushare engine stopped', body: why }, iconPath, showWindow, true);
  }));
  try {
    view = await openEngineView(await link.connect());
  } catch (error) {
    console.error(`gpushare: no tray or notifications this time: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  if (quitting) return view.close();
  cleanups.push(createTray(view, assetsDir, { show: showWindow, quit: () => app.quit(), tell: (title, body) => showNotice({ title, body }, iconPath, showWindow) }));
  cleanups.push(notifyOnAlerts(view, iconPath, showWindow));
}

registerAppScheme();
lockDownWebContents();
if (!app.requestSingleInstanceLock()) {
  app.quit(); // the first instance shows its window (second-instance); nothing here starts an engine
} else {
  app.on('second-instance', showWindow);
  app.on('window-all-closed', () => undefined); // the tray keeps the app (and its engine) running
  app.on('before-quit', (event) => {
    if (quitting) return;
    event.preventDefault();
    quitting = true;
    for (const cleanup of cleanups.splice(0)) cleanup();
    bridge?.close();
    view?.close();
    // a personal engine we started stops cleanly first (it resumes what it suspended, restores what it parked), even one still starting
    const stopped = linkReady ? linkReady.then((l) => l.stop(), () => null) : Promise.resolve(null);
    void stopped
      .then((exit) => exit && !exit.clean && console.error(`gpushare: the personal engine did not stop cleanly (${exit.signal ?? `exit code ${exit.code}`}).`))
      .finally(() => app.exit(0));
  });
  void app.whenReady().then(start);
}
