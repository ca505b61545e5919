// Test client: HTTP as bytes on a TCP connection, for requests a well-behaved client library would not send.
import { connect } from 'node:net';

export interface RawReply {
  status: number;
  body: string;
}

/** Sends head (the request line and headers, without the blank line) to 127.0.0.1:port; resolves with the status and body. */
export function rawHttp(port: number, head: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!match) return reject(new Error(`no HTTP reply: ${JSON.stringify(text.slice(0, 200))}`));
      const bodyAt = text.indexOf('\r\n\r\n');
      resolve({ status: Number(match[1]), body: bodyAt < 0 ? '' : text.slice(bodyAt + 4) });
    });
    socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  });
}
