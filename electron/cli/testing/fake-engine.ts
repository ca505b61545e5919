// A stand-in engine on a unix socket for CLI tests: answers session.whoami as it is told (a box
// daemon, say, with no root needed) and records every method it was asked, in order.
import { rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import type { ApiResults } from '../../../shared/api.js';
import { readLines } from '../../engine/server/read-lines.js';

export interface FakeEngine {
  path: string;
  /** Methods requested so far, in the order they came. */
  readonly asked: string[];
  close(): Promise<void>;
}

export async function listenAsFakeEngine(path: string, whoami: ApiResults['session.whoami']): Promise<FakeEngine> {
  const asked: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    readLines(socket, (line) => {
      const message = JSON.parse(line) as { kind: string; id: number; method: string };
      if (message.kind !== 'request') return;
      asked.push(message.method);
      const answer =
        message.method === 'session.whoami'
          ? { kind: 'response', id: message.id, ok: true, result: whoami }
          : { kind: 'response', id: message.id, ok: false, error: { code: 'unsupported', message: `the fake engine does not do ${message.method}` } };
      socket.write(JSON.stringify(answer) + '\n');
    });
  });
  rmSync(path, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  return {
    path,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What a box daemon run by root says to `user`. */
export const daemonWhoami = (user: string, uid: number, pid = 4242): ApiResults['session.whoami'] => ({
  user,
  uid,
  admin: uid === 0,
  engine: { kind: 'daemon', owner: 'root', pid },
  otherEngines: [],
  consoleUrl: null,
});
