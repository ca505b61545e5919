// The box daemon's metrics address from its config file: checked with the rest of the file before
// anything starts (an error names the key), served when set, and `--metrics` wins over it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadDaemonConfig } from '../daemon/config-file.js';
import { openDaemon } from '../daemon/daemon-host.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-daemon-metrics-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function configFile(config: object): string {
  const file = join(dir, `config-${++files}.json`);
  writeFileSync(file, JSON.stringify(config), { mode: 0o644 });
  return file;
}

test('the config file\'s metrics: an address is kept, null or absent means none, a bad one names the key', () => {
  assert.equal(loadDaemonConfig(configFile({ metrics: '0.0.0.0:9400' })).metrics, '0.0.0.0:9400');
  assert.equal(loadDaemonConfig(configFile({ metrics: null })).metrics, null);
  assert.equal(loadDaemonConfig(configFile({})).metrics, null);
  const refused = (metrics: unknown, problem: RegExp) => {
    const file = configFile({ metrics });
    assert.throws(() => loadDaemonConfig(file), (error: Error) => error.name === 'DaemonConfigError' && error.message.startsWith(`${file}: metrics`) && problem.test(error.message), String(metrics));
  };
  refused('metrics.example:9400', /"metrics\.example" is not an IP address/);
  refused('99999', /"99999" is not a port number/);
  refused(9400, /must be a string, got 9400/);
  refused('', /must not be empty/);
});

const asRoot = process.getuid?.() === 0 ? false : 'needs root: the box daemon runs as root';

test('the config file\'s boxName: kept, null or absent means the host name, a bad one names the key', () => {
  assert.equal(loadDaemonConfig(configFile({ boxName: 'gpu3.lab' })).boxName, 'gpu3.lab');
  assert.equal(loadDaemonConfig(configFile({ boxName: null })).boxName, null);
  assert.equal(loadDaemonConfig(configFile({})).boxName, null);
  assert.throws(() => loadDaemonConfig(configFile({ boxName: 'gpu 3' })), /config-\d+\.json: boxName: must be a box name \(letters, digits, "\.", "-", "_"\), like "gpu3", got "gpu 3"/);
  assert.throws(() => loadDaemonConfig(configFile({ boxName: '' })), /boxName: /);
});

test('a daemon serves its metrics where its config file says, unless --metrics says otherwise', { skip: asRoot }, async () => {
  const open = async (name: string, metrics: string | null, flag?: { host: string; port: number }, boxName?: string) => {
    const run = join(dir, name);
    mkdirSync(run, { recursive: true });
    return openDaemon({ socket: join(run, 'daemon.sock'), db: join(run, 'state', 'usage.db'), config: configFile({ metrics, ...(boxName ? { boxName } : {}) }), simulate: 'a100-40gb', ...(flag ? { metrics: flag } : {}) });
  };
  const fromConfig = await open('config', '127.0.0.1:0', undefined, 'labbox3');
  try {
    assert.match(fromConfig.metricsUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    assert.match(await (await fetch(fromConfig.metricsUrl!)).text(), /^gpushare_engine_info\{box="labbox3",kind="daemon",simulated="true",/m);
  } finally {
    await fromConfig.close();
  }
  const none = await open('none', null);
  await none.close();
  assert.equal(none.metricsUrl, null, 'no metrics unless asked');
  const flagWins = await open('flag', '10.255.255.1:9400', { host: '127.0.0.1', port: 0 }); // the config's address is not even this machine's
  try {
    assert.match(flagWins.metricsUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    assert.ok((await (await fetch(flagWins.metricsUrl!)).text()).includes(`gpushare_engine_info{box="${hostname()}",`), 'no boxName: the host name');
  } finally {
    await flagWins.close();
  }
});
