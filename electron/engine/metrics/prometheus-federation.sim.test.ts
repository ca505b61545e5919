// Metrics across boxes: two boxes (two `gpushare serve --simulate` engines with their own scenarios and
// box names), one real Prometheus scraping both and a second one federating the first. Every box's
// series stays its own through both (the target's `instance`, kept by `honor_labels`), and the info
// metric's `box` label names each, as the Grafana dashboard's box variable asks it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startServeBox, type ServeBox } from '../../cli/testing/serve-box.js';
import { packageRoot } from '../paths.js';
import { prometheusMissing, query, startPrometheus, type PrometheusServer, type VectorSample } from './testing/prometheus.js';

const POLL_LIMIT_MS = 60_000;
const GiB = 1024 ** 3;

/** Poll `promql` on `server` until `done` holds for its answer; fail naming what came, bounded. */
async function until(server: PrometheusServer, promql: string, done: (series: VectorSample[]) => boolean): Promise<VectorSample[]> {
  const deadline = Date.now() + POLL_LIMIT_MS;
  let series: VectorSample[] = [];
  for (;;) {
    series = await query(server.base, promql).catch(() => []);
    if (done(series)) return series;
    if (Date.now() > deadline || server.exitCode() !== null) assert.fail(`${promql} on ${server.base}: got ${JSON.stringify(series)}; prometheus exited ${server.exitCode()}; its log:\n${server.log()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const byInstance = (series: VectorSample[]): Map<string, VectorSample[]> => {
  const map = new Map<string, VectorSample[]>();
  for (const s of series) map.set(s.metric.instance, [...(map.get(s.metric.instance) ?? []), s]);
  return map;
};

test('one Prometheus scrapes two boxes and a second federates it: each box\'s series stay apart by instance, and gpushare_engine_info names each box', { skip: prometheusMissing, timeout: 180_000 }, async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'gpushare-federation-'));
  const boxes: ServeBox[] = [];
  const servers: PrometheusServer[] = [];
  t.after(async () => {
    await Promise.all([...servers.map((s) => s.stop()), ...boxes.map((b) => b.stop())]);
    rmSync(root, { recursive: true, force: true });
  });
  for (const [name, scenario] of [['boxa', 'a100-40gb'], ['boxb', 'h100x2-mig']]) boxes.push(await startServeBox(root, name, scenario, { engine: { boxName: name }, metrics: true }));
  const [a, b] = boxes.map((box) => ({ name: box.name, target: box.metricsTarget! }));

  const scraper = await startPrometheus(
    join(root, 'scraper'),
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: gpushare\n    static_configs:\n      - targets: ['${a.target}', '${b.target}']\n`,
  );
  servers.push(scraper);
  const federating = await startPrometheus(
    join(root, 'federating'),
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: federate\n    honor_labels: true\n    metrics_path: /federate\n    params:\n      'match[]': ['{job="gpushare"}']\n    static_configs:\n      - targets: ['${new URL(scraper.base).host}']\n`,
  );
  servers.push(federating);
  for (const config of [scraper.configFile, federating.configFile]) {
    const check = spawnSync('promtool', ['check', 'config', config], { encoding: 'utf8' });
    assert.equal(check.status, 0, `promtool check config ${config}: ${check.stdout}${check.stderr}`);
  }

  let boxbMemory = 0;
  for (const server of [scraper, federating]) {
    // each box's engine, named by its box and kept apart by its target, with the scrape job's own label (honored through federation)
    const info = await until(server, 'gpushare_engine_info', (s) => s.length === 2);
    assert.deepEqual(info.map((s) => [s.metric.instance, s.metric.box, s.metric.job, s.metric.kind]).sort(), [
      [a.target, 'boxa', 'gpushare', 'personal'],
      [b.target, 'boxb', 'gpushare', 'personal'],
    ].sort(), server.base);
    // each box's GPUs: the A100's one and the H100s' two, GPU 0 on both boxes two series, not one
    const total = byInstance(await until(server, 'gpushare_gpu_memory_total_bytes', (s) => s.length === 3));
    assert.deepEqual(total.get(a.target)!.map((s) => [s.metric.gpu, Number(s.value[1])]), [['0', 40 * GiB]], `${server.base}: boxa's GPU`);
    assert.deepEqual(total.get(b.target)!.map((s) => s.metric.gpu).sort(), ['0', '1'], `${server.base}: boxb's GPUs`);
    assert.ok(total.get(b.target)!.every((s) => Number(s.value[1]) > 40 * GiB), `${server.base}: boxb's are its H100s`);
    boxbMemory = total.get(b.target)!.reduce((sum, s) => sum + Number(s.value[1]), 0);
    // no series of one box is in the other's: each (metric, instance) pair has its own labels
    const all = await query(server.base, '{job="gpushare", __name__=~"gpushare_.+"}');
    const keys = all.map((s) => JSON.stringify(Object.entries(s.metric).sort()));
    assert.equal(new Set(keys).size, all.length, 'every series once');
    assert.deepEqual([...new Set(all.map((s) => s.metric.instance))].sort(), [a.target, b.target].sort());
  }

  // the dashboard's variables, asked of the federating server: box names, then the targets of one box
  const boxNames = (await (await fetch(`${federating.base}/api/v1/label/box/values?match[]=gpushare_engine_info`)).json()) as { data: string[] };
  assert.deepEqual(boxNames.data.sort(), ['boxa', 'boxb']);
  const ofBoxB = await query(federating.base, 'gpushare_engine_info{box=~"boxb"}');
  assert.deepEqual(ofBoxB.map((s) => s.metric.instance), [b.target]);
  // a per-box total, joined on the info metric as the README writes it
  const usedByBox = await query(federating.base, 'sum by (box) (gpushare_gpu_memory_total_bytes * on (instance) group_left (box) gpushare_engine_info)');
  assert.deepEqual(usedByBox.map((s) => [s.metric.box, Number(s.value[1])]).sort(), [['boxa', 40 * GiB], ['boxb', boxbMemory]].sort());

  // the Grafana dashboard on the federating server, every box chosen: each query runs, and a panel whose legend names the box gets it on every series
  const dashboard = JSON.parse(readFileSync(join(packageRoot(), 'assets', 'grafana', 'gpushare.json'), 'utf8')) as GrafanaDashboard;
  const variables = dashboard.templating.list.map((v) => v.name);
  assert.ok(variables.indexOf('box') >= 0 && variables.indexOf('box') < variables.indexOf('instance'), 'a box variable, before the engines it narrows');
  const everything = (expr: string): string => expr.replace(/\$(box|instance|gpu)\b/g, '.*');
  for (const panel of dashboard.panels) {
    for (const target of panel.targets ?? []) {
      const series = await query(federating.base, everything(target.expr));
      if (target.legendFormat?.includes('{{box}}')) assert.ok(series.every((s) => s.metric.box === 'boxa' || s.metric.box === 'boxb'), `${panel.title}: ${target.expr}`);
    }
  }
  const utilization = dashboard.panels.find((p) => p.title === 'GPU utilization')!.targets![0];
  const shown = await query(federating.base, everything(utilization.expr));
  assert.deepEqual([...new Set(shown.map((s) => s.metric.box))].sort(), ['boxa', 'boxb'], 'GPU utilization, both boxes by name');
  const engines = dashboard.templating.list.find((v) => v.name === 'instance')!.query.query.replace('$box', 'boxa');
  assert.equal(engines, 'label_values(gpushare_engine_info{box=~"boxa"}, instance)', 'the engines of the chosen box');
});

interface GrafanaDashboard {
  panels: Array<{ title: string; targets?: Array<{ expr: string; legendFormat?: string }> }>;
  templating: { list: Array<{ name: string; query: { query: string } }> };
}
