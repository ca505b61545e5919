// A real Prometheus server (Debian's `prometheus`) for the metrics tests: started on a free loopback
// port with a config and a data folder of the test's own, stopped (and awaited) by the test.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';

/** Why the Prometheus tests skip here, or false where prometheus and promtool are installed. */
export const prometheusMissing: string | false = spawnSync('prometheus', ['--version']).error || spawnSync('promtool', ['--version']).error ? 'prometheus is not installed (Debian package prometheus)' : false;

/** A port no one listens on now (the kernel's pick, released for Prometheus to take). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query through the server's HTTP API. */
export async function query(base: string, promql: string): Promise<VectorSample[]> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await response.json()) as { status: string; data?: { result: VectorSample[] }; error?: string };
  assert.equal(body.status, 'success', `query ${promql}: ${body.error}`);
  return body.data!.result;
}

export interface PrometheusServer {
  /** http://127.0.0.1:PORT */
  base: string;
  configFile: string;
  /** The end of its log, for failure messages. */
  log(): string;
  /** Its exit code once it exited, else null. */
  exitCode(): number | null;
  stop(): Promise<void>;
}

/** Prometheus with `config` (YAML text) in `dir` (made here), its data under dir/data. */
export async function startPrometheus(dir: string, config: string): Promise<PrometheusServer> {
  mkdirSync(join(dir, 'data'), { recursive: true });
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, config);
  const listen = `127.0.0.1:${await freePort()}`;
  const server = spawn('prometheus', [`--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=${listen}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log = (log + chunk).slice(-4000)));
  const exited = new Promise((resolve) => server.once('exit', resolve));
  return {
    base: `http://${listen}`,
    configFile,
    log: () => log,
    exitCode: () => server.exitCode,
    async stop() {
      if (server.exitCode === null) server.kill('SIGTERM');
      await exited;
    },
  };
}
