// `gpushare stop`: your personal engine stops as on Ctrl-C (what it suspended runs again), its process
// exits 0 and its socket is gone; a second stop finds nothing; the box daemon is never asked to stop.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { after, test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { readProcStatus } from '../../engine/proc/proc-status.js';
import { cliRig } from '../testing/cli-rig.js';
import { CLI_PATH } from '../testing/compiled-cli.js';
import { daemonWhoami, listenAsFakeEngine } from '../testing/fake-engine.js';
import { untilWith } from '../../testing/until.js';

const rig = cliRig('stop');
after(() => rig.dispose());

const until = untilWith({ intervalMs: 100, timeoutMs: 15_000 });

test('stop stops your personal engine as SIGTERM does: what it suspended runs again, it exits 0, its socket is gone; a second stop finds none', { timeout: 120_000 }, async (t) => {
  const engine = await rig.serve();
  const fakejob = spawn(process.execPath, [CLI_PATH, 'sim', 'fakejob', '--scenario', 'a100-40gb', '--', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '120'], { env: rig.env, stdio: 'ignore' });
  t.after(() => fakejob.kill('SIGKILL'));
  const job = await until('the fakejob on the GPU', async () => (JSON.parse((await rig.gpushare(['jobs', '--json'])).stdout) as JobView[]).find((j) => !j.managed && j.pid !== null));
  t.after(() => {
    try {
      process.kill(job.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  const suspend = await rig.gpushare(['set', job.id, '--suspend']);
  assert.equal(suspend.code, 0, suspend.stderr);
  await until(`${job.id} stopped`, async () => (readProcStatus(job.pid!)?.state === 'T' ? true : undefined));

  const stop = await rig.gpushare(['stop']);
  assert.equal(stop.code, 0, stop.stderr);
  assert.equal(
    stop.stdout,
    `Stopped your personal engine (pid ${engine.child.pid}): its socket ${rig.personalSocket} no longer answers and its process has exited. Managed jobs keep running; the next engine re-adopts them.\n`,
  );
  assert.equal(await engine.exited, 0, engine.output());
  assert.equal(existsSync(rig.personalSocket), false, 'the socket file is gone');
  assert.notEqual(readProcStatus(job.pid!)?.state, 'T', 'the suspended process runs again');

  const again = await rig.gpushare(['stop']);
  assert.equal(again.code, 1);
  assert.equal(
    again.stderr,
    `No gpushare engine is running: nothing to stop (tried your personal engine at ${rig.personalSocket}: no socket there; the box daemon at ${rig.daemonSocket}: no socket there).\n`,
  );
});

test('with only the box daemon answering, stop refuses with a sentence and never asks the daemon to stop', async (t) => {
  const me = userInfo();
  const daemon = await listenAsFakeEngine(rig.daemonSocket, daemonWhoami(me.username, me.uid));
  t.after(() => daemon.close());
  const { code, stdout, stderr } = await rig.gpushare(['stop']);
  assert.equal(code, 1);
  assert.equal(stdout, '');
  assert.equal(stderr, 'You have no personal engine running, and the box daemon is stopped by an admin: systemctl stop gpushare.\n');
  assert.deepEqual(daemon.asked, ['session.whoami']);
});

test('stop --help prints its usage (exit 0); an argument is a usage error (exit 2)', async () => {
  const help = await rig.gpushare(['stop', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: gpushare stop\n/);
  const wrong = await rig.gpushare(['stop', 'bob']);
  assert.equal(wrong.code, 2);
  assert.equal(wrong.stderr, 'gpushare stop: gpushare stop takes no arguments, got "bob".\n');
});
