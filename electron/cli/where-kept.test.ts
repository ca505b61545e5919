// Where gpushare keeps what, for a personal engine (README "Where gpushare keeps what"): its store,
// job logs and runtime folder are readable by their owner alone (the config file: settings/user-config.test.ts).
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cliRig } from './testing/cli-rig.js';

const rig = cliRig('where-kept');
after(() => rig.dispose());

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8).padStart(4, '0');

test("a personal engine's store, job logs and runtime folder are its owner's alone (0600 files, 0700 folders)", async () => {
  const served = await rig.serve();
  const run = await rig.gpushare(['run', '--wait', '5', '--', 'true']); // its log is made when it starts, an evaluation after the submit
  assert.equal(run.code, 0, run.stderr);
  const log = /log: (\S+)/.exec(run.stdout)?.[1];
  assert.ok(log && existsSync(log), `the job's log: ${run.stdout}`);

  const data = join(rig.home, 'data', 'gpushare');
  const state = join(rig.home, 'state', 'gpushare');
  const expected: Array<[string, string]> = [
    [data, '0700'],
    [join(data, 'usage.db'), '0600'],
    ...['-wal', '-shm'].filter((s) => existsSync(join(data, `usage.db${s}`))).map((s): [string, string] => [join(data, `usage.db${s}`), '0600']),
    [join(state, 'logs'), '0700'],
    [log, '0600'],
    [join(rig.home, 'gpushare'), '0700'], // $XDG_RUNTIME_DIR/gpushare: the socket, the launch gate
  ];
  assert.deepEqual(expected.map(([path]) => [path, modeOf(path)]), expected, served.output());
});
