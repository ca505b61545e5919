// Test client: a browser console's WebSocket (the `ws` package), as the renderer uses it.
import WebSocket from 'ws';
import type { ApiEvent, ApiEvents, ApiMethod, ApiParams, ApiResults } from '../../../../shared/api.js';

export interface ConsoleClient {
  call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResults[M]>;
  /** Sends this text as one frame, as it is; resolves with the response carrying id. */
  sendRaw(text: string, id: number): Promise<{ ok: boolean; result?: unknown; error?: { code: string; message: string } }>;
  /** The next `event` the server sends after this call. */
  nextEvent<E extends ApiEvent>(event: E): Promise<ApiEvents[E]>;
  /** Resolves when the server (or close()) closes the WebSocket. */
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/**
 * Opens /api with token on the console at consoleUrl (http://127.0.0.1:PORT/?token=…), as a page the console served
 * (Origin: the console's own; null sends none); rejects with the HTTP status and the server's words if refused.
 */
export function openConsoleClient(consoleUrl: string, token = new URL(consoleUrl).searchParams.get('token') ?? '', origin: string | null = new URL(consoleUrl).origin): Promise<ConsoleClient> {
  const { host } = new URL(consoleUrl);
  const ws = new WebSocket(`ws://${host}/api?token=${encodeURIComponent(token)}`, origin === null ? {} : { origin });
  const waiting = new Map<number, (message: { ok: boolean; result?: unknown; error?: { code: string; message: string } }) => void>();
  const eventWaiters: Array<{ event: ApiEvent; resolve: (data: unknown) => void }> = [];
  let nextId = 1000;
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { kind: string; id?: number; event?: ApiEvent; data?: unknown; ok: boolean };
    if (message.kind === 'event') {
      const i = eventWaiters.findIndex((w) => w.event === message.event);
      if (i >= 0) eventWaiters.splice(i, 1)[0].resolve(message.data);
    } else if (message.kind === 'response' && typeof message.id === 'number') {
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const sendRaw: ConsoleClient['sendRaw'] = (text, id) =>
    new Promise((resolve) => {
      waiting.set(id, resolve);
      ws.send(text);
    });
  const client: ConsoleClient = {
    async call(method, params) {
      const id = nextId++;
      const response = await sendRaw(JSON.stringify({ kind: 'request', id, method, params }), id);
      if (!response.ok) throw new Error(`${method} failed: ${response.error?.code}: ${response.error?.message}`);
      return response.result as never;
    },
    sendRaw,
    nextEvent: (event) => new Promise((resolve) => eventWaiters.push({ event, resolve: resolve as (data: unknown) => void })),
    closed,
    close: () => ws.close(),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('close', () => {
        reject(new Error(`the console refused the WebSocket: HTTP ${res.statusCode} ${body.trim()}`));
        ws.terminate();
      });
    });
    ws.once('error', (error) => reject(error));
  });
}
