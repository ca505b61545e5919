// The desktop app: hosts the engine in the main process and shows the console in a
// sandboxed window. The only place (with electron/preload) that imports electron.
import { app, BrowserWindow } from 'electron';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openConsoleHost, type ConsoleHost } from '../engine/console-host.js';
import { DEFAULT_SCENARIO } from '../engine/gpu/open-backend.js';
import { packageRoot } from '../engine/paths.js';
import { CONSOLE_URL, registerAppScheme, serveRenderer } from './app-protocol.js';
import { bridgeIpcToEngine } from './ipc-bridge.js';
import { notifyOnAlerts } from './notifications.js';
import { denyPermissions, lockDownWebContents } from './security.js';
import { createTray } from './tray.js';

const here = dirname(fileURLToPath(import.meta.url));
const assetsDir = join(packageRoot(), 'assets');

/** `--simulate [SCENARIO]` as `gpushare start` passes it on. */
function simulateFlag(argv: readonly string[]): string | undefined {
  const at = argv.indexOf('--simulate');
  if (at < 0) return undefined;
  const next = argv[at + 1];
  return next && !next.startsWith('-') ? next : DEFAULT_SCENARIO;
}

registerAppScheme();
lockDownWebContents();
if (!app.requestSingleInstanceLock()) app.quit();

let host: ConsoleHost | null = null;
let window: BrowserWindow | null = null;
const cleanups: Array<() => void> = [];
let quitting = false;

function showWindow(): void {
  if (!window || window.isDestroyed()) {
    window = new BrowserWindow({
      width: 1440,
      height: 920,
      backgroundColor: '#0f1218',
      title: 'gpushare',
      icon: join(assetsDir, 'icon.png'),
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

app.on('second-instance', showWindow);
app.on('window-all-closed', () => undefined); // the tray keeps the engine running

app.whenReady().then(async () => {
  denyPermissions();
  serveRenderer(join(packageRoot(), 'dist', 'renderer'));
  host = await openConsoleHost({ simulate: simulateFlag(process.argv), say: (line) => console.error(line) });
  const engine = host.engine;
  cleanups.push(bridgeIpcToEngine(engine, (contents) => window !== null && !window.isDestroyed() && contents === window.webContents));
  cleanups.push(createTray(engine, assetsDir, { show: showWindow, quit: () => app.quit() }));
  cleanups.push(notifyOnAlerts(engine, join(assetsDir, 'icon.png'), showWindow));
  showWindow();
});

app.on('before-quit', (event) => {
  if (quitting || !host) return;
  event.preventDefault();
  quitting = true;
  for (const cleanup of cleanups.splice(0)) cleanup();
  void host.close().finally(() => app.exit(0));
});
