// The person's config file as the commands read it: engine defaults a flag overrides, and a bad file
// stops the command with the file and the key named.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cliRig } from './testing/cli-rig.js';

const rig = cliRig('user-settings');
after(() => rig.dispose());
const configFile = join(rig.home, 'config', 'gpushare', 'config.json');
const writeConfig = (value: unknown): void => {
  mkdirSync(join(rig.home, 'config', 'gpushare'), { recursive: true });
  writeFileSync(configFile, typeof value === 'string' ? value : JSON.stringify(value));
};

test('a bad config file: serve and run exit 1 naming the file and the key, and start nothing', async () => {
  writeConfig({ engine: { rate: 2 } });
  for (const args of [['serve', '--simulate', 'a100-40gb'], ['run', '--', 'true'], ['engine', '--simulate', 'a100-40gb']]) {
    const run = await rig.gpushare(args);
    assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
    assert.equal(run.stderr, `gpushare ${args[0]}: ${configFile}: engine.rate: is not a known field (known: rateHz, db, defaultPriority, metrics, boxName, autoParkIdleSeconds)\n`);
  }
  assert.equal(existsSync(rig.personalSocket), false, 'no engine started');
  const status = await rig.gpushare(['status']);
  assert.equal(status.code, 1, 'no engine answers: that is what status exits 1 for, not the file');
  assert.match(status.stdout, new RegExp(`\\nsettings: ${configFile} NOT VALID \\(the engines you start refuse it\\): ${configFile}: engine\\.rate: is not a known field`));
});

test("the config's engine.db is where serve keeps usage, and its defaultPriority is what run gives a job", async () => {
  const db = join(rig.home, 'elsewhere', 'usage.db');
  writeConfig({ engine: { db, defaultPriority: 'best-effort', rateHz: 5 } });
  await rig.serve();
  assert.equal(existsSync(db), true, 'the store at engine.db');
  const status = await rig.gpushare(['status']);
  assert.match(status.stdout, new RegExp(`\\nsettings: ${configFile}\\n`));
  assert.match(status.stdout, new RegExp(`\\nusage: +recorded in ${db}`));
  assert.equal(existsSync(join(rig.home, 'data', 'gpushare', 'usage.db')), false, 'not at the default place');
  const run = await rig.gpushare(['run', '--wait', '0', '--json', '--', 'sleep', '5']);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).priority, 'best-effort');
  const flagWins = await rig.gpushare(['run', '--wait', '0', '--json', '--priority', 'high', '--', 'sleep', '5']);
  assert.equal(JSON.parse(flagWins.stdout).priority, 'high');
  for (const job of [JSON.parse(run.stdout).id, JSON.parse(flagWins.stdout).id]) await rig.gpushare(['set', job, '--terminate']);
});
