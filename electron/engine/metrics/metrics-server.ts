// The metrics endpoint: GET /metrics on its own HTTP listener (never the console's port, which
// needs a token). OpenMetrics when the scraper asks for it (Prometheus does), else the text format.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GpushareMetrics, type MetricsSources } from './gpushare-metrics.js';
import { urlHost, type MetricsAddress } from './metrics-address.js';

export interface MetricsListener {
  /** http://HOST:PORT/metrics, with the port it got. */
  url: string;
  close(): Promise<void>;
}

export async function listenForMetrics(sources: MetricsSources, address: MetricsAddress): Promise<MetricsListener> {
  const formats = { prometheus: new GpushareMetrics(sources, 'prometheus'), openmetrics: new GpushareMetrics(sources, 'openmetrics') };
  const server = createServer((request, response) => {
    void answer(request, response, wantsOpenMetrics(request.headers.accept) ? formats.openmetrics : formats.prometheus);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use' : error.code === 'EADDRNOTAVAIL' ? 'no interface of this machine has that address' : error.message;
      reject(new Error(`The metrics endpoint cannot listen on ${urlHost(address.host)}:${address.port}: ${why}.`));
    });
    server.listen(address.port, address.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(address.host)}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // a scraper's keep-alive connection must not hold the engine's stop
      }),
  };
}

async function answer(request: IncomingMessage, response: ServerResponse, metrics: GpushareMetrics): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (path !== '/metrics') {
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('gpushare serves its metrics at /metrics.\n');
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end(`/metrics answers GET, not ${request.method}.\n`);
    return;
  }
  try {
    const text = await metrics.render();
    response.writeHead(200, { 'content-type': metrics.contentType }).end(request.method === 'HEAD' ? undefined : text);
  } catch (error) {
    response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`The metrics could not be rendered: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

/** The scraper lists OpenMetrics among what it accepts (with a non-zero weight). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => {
    const [type, ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    return type === 'application/openmetrics-text' && (q === undefined || Number(q.slice(2)) > 0);
  });
}
