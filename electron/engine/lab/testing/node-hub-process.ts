// A ForkHub over Node's child_process.fork, for tests and the bench: the hub runs in a real child process, as in
// the app (where electron/main/index.ts forks it with Electron's utilityProcess). Messages cross with V8's
// serializer ('advanced'), as a utility process's postMessage clones them.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { hubChildOver, type HubChild } from '../hub-process-protocol.js';

const ENTRY = fileURLToPath(new URL('./node-hub-process-entry.js', import.meta.url));

/** A hub process; `echo` hears its stderr (default: this process's stderr). */
export function forkNodeHub(echo?: (text: string) => void): HubChild {
  const child = fork(ENTRY, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
  child.on('error', () => undefined); // a send after its end: 'exit' says it
  return hubChildOver(
    {
      pid: () => child.pid,
      post: (message) => void (child.connected && child.send(message)),
      onMessage: (listener) => void child.on('message', listener),
      kill: () => void child.kill(),
      stderr: child.stderr,
      onEnd: (listener) => void child.once('exit', listener),
    },
    echo,
  );
}
