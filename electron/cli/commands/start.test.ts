// `gpushare start` where an engine already answers (the box daemon): no personal engine is started;
// the console is served through the user's own proxy (`gpushare console`) to the daemon's socket.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { after, test } from 'node:test';
import { cliRig } from '../testing/cli-rig.js';
import { CLI_PATH } from '../testing/compiled-cli.js';
import { daemonWhoami, listenAsFakeEngine } from '../testing/fake-engine.js';

const rig = cliRig('start');
after(() => rig.dispose());

test('start beside an answering box daemon starts no engine and serves the console through a proxy to the daemon', { timeout: 60_000 }, async (t) => {
  const me = userInfo();
  const daemon = await listenAsFakeEngine(rig.daemonSocket, daemonWhoami(me.username, me.uid));
  t.after(() => daemon.close());
  const env = { ...rig.env, DISPLAY: '', WAYLAND_DISPLAY: '' }; // no browser to open
  const start = spawn(process.execPath, [CLI_PATH, 'start', '--browser', '--simulate'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
  t.after(() => start.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  start.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    start.stdout.on('data', (d: Buffer) => (stdout += d.toString()).includes('gpushare console: ') && resolve());
    void exited.then((code) => reject(new Error(`gpushare start exited (${code}): ${stdout}${stderr}`)));
  });

  assert.equal(
    stderr,
    `The box daemon answers on ${rig.daemonSocket}, so gpushare start opens its console instead of starting an engine (--simulate and --no-demo apply only to an engine it starts).\n`,
  );
  assert.match(stdout, /^gpushare console: http:\/\/127\.0\.0\.1:\d+\//);
  assert.equal(existsSync(rig.personalSocket), false, 'no personal engine listens');
  assert.deepEqual(daemon.asked, ['session.whoami'], 'the proxy asked the daemon who it is');
});
