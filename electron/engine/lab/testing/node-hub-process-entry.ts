// The lab hub's process under Node's child_process.fork (tests and the bench): the same hub as the app's
// utility process (hub-process-entry.ts), over the IPC channel; it ends when its parent does.
import { endOnUncaughtError, serveHubProcess } from '../hub-process.js';

if (!process.send) {
  console.error('node-hub-process-entry.js runs only under child_process.fork (node-hub-process.ts starts it).');
  process.exit(2);
}
endOnUncaughtError();
process.on('disconnect', () => process.exit(0)); // the parent is gone
serveHubProcess({ post: (message) => void process.send!(message), onMessage: (listener) => void process.on('message', listener) });
