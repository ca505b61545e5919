// An engine whose usage database cannot be opened runs all the same, and says so: on stderr at
// start, in `gpushare status`, and to the console (store.status), naming the path and why; it
// records again, with what it kept, once the file can be opened.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { until } from '../../testing/until.js';
import { connectToEngine } from '../engine-client.js';
import { cliRig, type ServedEngine } from '../testing/cli-rig.js';
import type { StatusReport } from './status.js';

const rig = cliRig('store-trouble');
let engine: ServedEngine | null = null;
after(async () => {
  engine?.child.kill('SIGTERM');
  await engine?.exited;
  rig.dispose();
});


test('serve on a database that cannot be opened runs, and says in stderr, status and the console that usage is not being recorded, why and where', async () => {
  const db = join(rig.home, 'data', 'gpushare', 'usage.db');
  mkdirSync(db, { recursive: true }); // a directory where the file should be: no SQLite can open it, root or not
  engine = await rig.serve();
  const said = new RegExp(`Usage is not being recorded: it cannot be opened \\(.+\\), ${db.replace(/[.]/g, '\\.')}\\.`);
  assert.match(engine.output(), said, 'stderr says so at start');

  const { code, stdout } = await rig.gpushare(['status']);
  assert.equal(code, 0);
  const usage = stdout.split('\n').find((line) => line.startsWith('usage:'));
  assert.ok(usage, stdout);
  assert.match(usage, /^usage: {4}NOT RECORDED\. Usage is not being recorded: it cannot be opened/);
  assert.ok(usage.includes(db), usage);
  const json = JSON.parse((await rig.gpushare(['status', '--json'])).stdout) as StatusReport;
  assert.equal(json.usage?.recording, false);
  assert.equal(json.usage?.path, db);

  const client = await connectToEngine(rig.personalSocket);
  try {
    const heard: boolean[] = [];
    client.on('store', (status) => heard.push(status.recording));
    const status = await client.call('store.status', {});
    assert.equal(status.recording, false);
    const now = Date.now();
    const report = await client.call('reports.query', { since: now - 60_000, until: now, by: 'user' }).then(
      () => 'answered',
      (error: Error & { code?: string }) => `${error.code}: ${error.message}`,
    );
    assert.match(report, new RegExp(`^unsupported: The usage database ${db.replace(/[.]/g, '\\.')} is not open: it cannot be opened`));
    assert.ok(status.keptSamples >= 0);
    rmSync(db, { recursive: true }); // out of the way: the next flush opens the file and writes what was kept
    await until('recording again once the file can be opened', async () => (await client.call('store.status', {})).recording, { timeoutMs: 10_000, intervalMs: 100 });
    assert.deepEqual(heard, [true], 'the console heard it resume');
  } finally {
    client.close();
  }
  const again = (await rig.gpushare(['status'])).stdout.split('\n').find((line) => line.startsWith('usage:'));
  assert.equal(again, `usage:    recorded in ${db}`);
});
