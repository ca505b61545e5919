// Electron's security checklist, applied to every web contents the app ever creates.
import { app, session } from 'electron';
import { isConsoleUrl } from './trust.js';

export function lockDownWebContents(): void {
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event, url) => {
      if (!isConsoleUrl(url)) event.preventDefault(); // only our own pages, decided as for IPC
    });
    contents.on('will-redirect', (event) => event.preventDefault());
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  });
}

export function denyPermissions(): void {
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
}
