// `gpushare console`: this user's local proxy to the box daemon. It connects to the daemon's
// unix socket as the user running it (so the daemon's idea of who is asking is the kernel's)
// and serves the browser console on 127.0.0.1 with a one-time token, one socket connection per
// browser client. The daemon itself never listens on TCP.
import { daemonSocketPath } from '../../engine/daemon/daemon-paths.js';
import { readLines } from '../../engine/server/read-lines.js';
import { connect } from 'node:net';
import { relayToSocket } from '../../engine/server/relay.js';
import { serveConsoleOnLoopback } from '../../engine/server/web-server.js';
import type { ApiResults } from '../../../shared/api.js';
import { parseFlags, UsageError } from '../args.js';
import { openInBrowser } from '../open-browser.js';

/** The box daemon's socket (`gpushare daemon`'s default). */
// A daemon that accepts but never answers is as good as none; this long is generous for a loaded box.
const ANSWER_TIMEOUT_MS = 10_000;

type WhoAmI = ApiResults['session.whoami'];

export async function consoleCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { port: { type: 'string' }, socket: { type: 'string' }, 'no-open': { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`gpushare console takes no arguments, got "${positionals[0]}".`);
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (0-65535), got "${values.port}".`);
  if (values.socket === '') throw new UsageError('--socket needs the path of the daemon\'s unix socket.');
  const socketPath = values.socket ?? (process.env.GPUSHARE_SOCKET || daemonSocketPath());

  const who = await askWhoAmI(socketPath);
  if (typeof who === 'string') {
    process.stderr.write(`${who}\n`);
    return 1;
  }
  // the stop signals are caught before the URL is out: a stop right after it still removes the page with the token
  const stopped = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve());
  });
  const web = await serveConsoleOnLoopback(relayToSocket(socketPath), { port });
  const engine = who.engine.kind === 'daemon' ? 'box daemon' : `${who.engine.owner}'s personal engine`;
  const page = values['no-open'] ? null : openInBrowser(web.url);
  process.stdout.write(`gpushare console: ${web.url}\nengine: ${engine} on ${socketPath} · signed in as ${who.user} (uid ${who.uid})\n`);
  await stopped;
  page?.dispose();
  await web.close();
  return 0;
}

/** The daemon's session.whoami for this process, or why it could not be asked (one sentence). */
function askWhoAmI(socketPath: string): Promise<WhoAmI | string> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const done = (result: WhoAmI | string): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(`The gpushare engine on ${socketPath} accepted the connection but did not answer within ${ANSWER_TIMEOUT_MS / 1000} s.`), ANSWER_TIMEOUT_MS);
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done(
        `No box daemon answers on ${socketPath} (${error.code ?? error.message}): use \`gpushare start\` for a personal engine, ` +
          'or ask an admin to install the daemon (`gpushare daemon install`).',
      ),
    );
    socket.once('close', () => done(`The gpushare engine on ${socketPath} closed the connection before answering.`));
    readLines(socket, (line) => {
      let message: { kind?: string; id?: number; ok?: boolean; result?: WhoAmI; error?: { message: string } };
      try {
        message = JSON.parse(line);
      } catch {
        return done(`What answers on ${socketPath} is not a gpushare engine (it sent a line that is not JSON).`);
      }
      if (message.kind !== 'response' || (message.id !== 1 && message.id !== -1)) return;
      done(message.ok && message.result ? message.result : `The gpushare engine on ${socketPath} refused: ${message.error?.message ?? 'no reason given'}`);
    });
    socket.write(JSON.stringify({ kind: 'request', id: 1, method: 'session.whoami', params: {} }) + '\n');
  });
}
