// The lab hub's process in the desktop app: electron/main/index.ts starts this file with Electron's
// utilityProcess.fork, a Node process whose `process.parentPort` (a global there, so no electron import)
// carries the app's messages. Tests and the bench run the same hub under Node's child_process.fork
// (testing/node-hub-process.ts).
import { endOnUncaughtError, serveHubProcess } from './hub-process.js';

interface ParentPort {
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
}

const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort;
if (!parentPort) {
  console.error('gpushare: hub-process-entry.js runs only as an Electron utility process (the desktop app starts it).');
  process.exit(2);
}
endOnUncaughtError();
serveHubProcess({ post: (message) => parentPort.postMessage(message), onMessage: (listener) => void parentPort.on('message', (event) => listener(event.data)) });
