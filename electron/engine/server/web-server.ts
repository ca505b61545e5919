// The browser console: the built renderer and a WebSocket API on loopback only,
// guarded by a random token that is part of the printed URL. Each WebSocket client gets a
// session from a SessionOpener: the engine in this process, or a relay to an engine's socket.
import { isUtf8 } from 'node:buffer';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { API_EVENTS } from '../../../shared/api.js';
import type { Engine } from '../engine.js';
import { packageRoot } from '../paths.js';
import { boundedOutbox, type Line, type Outbox, type OutboxStats } from './outbox.js';
import { MAX_REQUEST_BYTES, openSession, parseMessage, wireLine, type Session } from './session.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.map': 'application/json',
};

const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export interface WebServer {
  url: string;
  port: number;
  token: string;
  /** Each connected WebSocket client's outbox: how far behind it is, what it was spared. */
  clients(): OutboxStats[];
  close(): Promise<void>;
}

export const rendererDir = (): string => join(packageRoot(), 'dist', 'renderer');

/** How one browser client reaches an engine: its parsed messages go to the session, the engine's come back as JSON text (or its UTF-8 bytes). */
export interface SessionOpener {
  /** ended: the engine's side is gone (a relay whose socket closed); the server then closes that WebSocket. `query`: the WebSocket URL's (the lab console's `box`). */
  open(send: (json: Line) => void, ended: (why: string) => void, query: URLSearchParams): Session;
}

/** Sessions on the engine in this process, as its owner (`gpushare serve`, `gpushare start`). */
export function engineSessions(engine: Engine): SessionOpener {
  return { open: (send) => openSession(engine, { ...engine.owner, via: 'web' }, (message) => send(wireLine(message)), API_EVENTS) };
}

export interface LoopbackOptions {
  port?: number;
  token?: string;
}

/** The console for the engine in this process. */
export function listenOnLoopback(engine: Engine, options: LoopbackOptions = {}): Promise<WebServer> {
  return serveConsoleOnLoopback(engineSessions(engine), options);
}

/** The console, each WebSocket client's session opened by sessions. */
export async function serveConsoleOnLoopback(sessions: SessionOpener, options: LoopbackOptions = {}): Promise<WebServer> {
  const token = options.token ?? randomBytes(24).toString('hex');
  const staticRoot = rendererDir();
  let port = 0;

  // Only our own host names: a page elsewhere that rebinds DNS to 127.0.0.1 is refused.
  const hostAllowed = (req: IncomingMessage): boolean => {
    const host = req.headers.host ?? '';
    return host === `127.0.0.1:${port}` || host === `localhost:${port}` || host === `[::1]:${port}`;
  };

  const tokenOk = (url: URL): boolean => {
    const given = Buffer.from(url.searchParams.get('token') ?? '');
    const expected = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  // The page that opened a WebSocket: the console's own (as it was served: Origin is that Host), or none at all.
  const originRefusal = (req: IncomingMessage): string | null => {
    const origin = req.headers.origin;
    const own = `http://${req.headers.host}`;
    if (origin === own) return null;
    if (origin === undefined) return `Forbidden: no Origin header. Only the gpushare console's own page (${own}) may open /api.`;
    return `Forbidden origin ${origin.slice(0, 200)}: only the gpushare console's own page (${own}) may open /api.`;
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    try {
      servePage(req, res);
    } catch (error) {
      console.error(`gpushare: the console's page server failed on ${JSON.stringify(req.url?.slice(0, 200))}:`, error);
      if (!res.headersSent) plain(res, 500, 'The console failed to answer this request.');
      else res.destroy();
    }
  });

  const servePage = (req: IncomingMessage, res: ServerResponse): void => {
    if (!hostAllowed(req)) return plain(res, 403, 'Forbidden host.');
    const url = requestUrl(req, port);
    if (!url) return plain(res, 400, `Bad request target ${describeTarget(req)}: not a URL.`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'Only GET.');
    // a browser never sees why its WebSocket was refused: the console asks here whether its token is the one
    if (url.pathname === '/api') return tokenOk(url) ? plain(res, 200, 'The access token is right.') : plain(res, 401, 'The access token is wrong.');
    if (!existsSync(join(staticRoot, 'index.html'))) {
      return plain(res, 503, 'The console is not built yet: run `npm run build` in the gpushare checkout.');
    }
    const path = decodedPath(url);
    if (path === null) return plain(res, 400, `Bad path ${url.pathname.slice(0, 200)}: not valid percent-encoding.`);
    let file = normalize(join(staticRoot, path));
    if (!file.startsWith(staticRoot + sep) && file !== staticRoot) return plain(res, 404, 'Not found.');
    if (!existsSync(file) || statSync(file).isDirectory()) file = join(staticRoot, 'index.html');
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : readFileSync(file));
  };

  // Node closes a CONNECT it has no handler for without a word: answer it like any other method that is not GET
  server.on('connect', (_req, socket: Duplex) => {
    socket.on('error', () => undefined);
    refuseOnSocket(socket, 405, 'Only GET.');
  });

  // UTF-8 is checked here, so a bad frame is closed with a reason (ws itself closes 1007 with none).
  const outboxes = new Map<WebSocket, Outbox>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_REQUEST_BYTES, skipUTF8Validation: true });
  server.on('upgrade', (req, socket: Duplex, head) => {
    socket.on('error', () => undefined); // a client gone before its refusal is written
    const url = requestUrl(req, port);
    if (!url) return refuseOnSocket(socket, 400, `Bad request target ${describeTarget(req)}: not a URL.`);
    if (url.pathname !== '/api' || !hostAllowed(req)) return refuseOnSocket(socket, 403, 'Forbidden.');
    const badOrigin = originRefusal(req);
    if (badOrigin) return refuseOnSocket(socket, 403, badOrigin);
    if (!tokenOk(url)) return refuseOnSocket(socket, 403, 'Forbidden: the access token is wrong.');
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const outbox = boundedOutbox('a console client (WebSocket)', {
        buffered: () => ws.bufferedAmount,
        write: (line) => ws.send(line, { binary: false }, () => outbox.drained()), // bytes too go as a text message
        disconnect: () => ws.terminate(),
      });
      outboxes.set(ws, outbox);
      const session = sessions.open(
        (json) => {
          if (ws.readyState === ws.OPEN) outbox.send(json);
        },
        (why) => ws.close(1011, closeReason(why)), // the console's reconnect then says the engine went away
        url.searchParams,
      );
      ws.on('message', (data: Buffer, isBinary) => {
        if (!isBinary && !isUtf8(data)) return ws.close(1007, 'A text message that is not UTF-8: the console closes this connection.');
        const parsed = parseMessage(data.toString(), 'message');
        if (parsed.ok) session.receive(parsed.message);
        else outbox.send(JSON.stringify(parsed.refusal));
      });
      // ws has closed it (1009: past MAX_REQUEST_BYTES; 1002: not the protocol); unheard, the error would end the engine
      ws.on('error', (error) => console.error(`gpushare: a console client was disconnected: ${error.message}.`));
      ws.on('close', () => {
        outboxes.delete(ws);
        session.close();
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE') return reject(error);
      reject(new Error(`The console cannot listen on 127.0.0.1:${options.port}: the port is in use (give another --port, or none for a free one).`));
    });
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    clients: () => [...outboxes.values()].map((outbox) => outbox.stats()),
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The request's URL, or null when its target is not one (`GET http://[`). */
function requestUrl(req: IncomingMessage, port: number): URL | null {
  try {
    return new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
  } catch {
    return null;
  }
}

function describeTarget(req: IncomingMessage): string {
  return JSON.stringify((req.url ?? '').slice(0, 200));
}

/** The path as a file name, or null when it is not valid percent-encoding (`/%E0%A4%A`). */
function decodedPath(url: URL): string | null {
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
}

/** An HTTP refusal written on the raw socket of an upgrade or CONNECT (no ServerResponse there). */
function refuseOnSocket(socket: Duplex, status: 400 | 403 | 405, text: string): void {
  const body = text + '\n';
  const reason = { 400: 'Bad Request', 403: 'Forbidden', 405: 'Method Not Allowed' }[status];
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** A WebSocket close reason is at most 123 bytes of UTF-8. */
function closeReason(why: string): string {
  if (Buffer.byteLength(why) <= 123) return why;
  let reason = why;
  while (Buffer.byteLength(reason) > 120) reason = reason.slice(0, -1);
  return reason + '…';
}

function plain(res: ServerResponse, status: number, text: string): void {
  // a refusal may quote the request's path: never let a browser read it as a page
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'" });
  res.end(text + '\n');
}
