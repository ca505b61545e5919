// The app's flags reach the personal engine it starts, and nothing of Chromium's does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appFlags, personalEngineCommand } from './app-args.js';

const runtime = { execPath: '/opt/gpushare/gpushare', root: '/opt/gpushare/resources/app', compiledTree: '/opt/gpushare/resources/app/dist', env: { HOME: '/home/alice', PATH: '/usr/bin' } };

test('--simulate takes an optional scenario; --no-demo is a switch; Chromium\'s flags are not ours', () => {
  assert.deepEqual(appFlags(['/usr/bin/electron', '/opt/app', '--no-sandbox'], 'h100x2-mig'), { simulate: undefined, noDemo: false });
  assert.deepEqual(appFlags(['electron', '.', '--simulate'], 'h100x2-mig'), { simulate: 'h100x2-mig', noDemo: false });
  assert.deepEqual(appFlags(['electron', '.', '--simulate', '--no-demo'], 'h100x2-mig'), { simulate: 'h100x2-mig', noDemo: true });
  assert.deepEqual(appFlags(['electron', '.', '--simulate', 'a100-40gb', '--no-sandbox'], 'h100x2-mig'), { simulate: 'a100-40gb', noDemo: false });
});

test('--metrics reaches the personal engine as given (gpushare start --metrics with the desktop app)', () => {
  const flags = appFlags(['electron', '.', '--no-demo', '--metrics', '0.0.0.0:9400', '--no-sandbox'], 'h100x2-mig');
  assert.deepEqual(flags, { simulate: undefined, noDemo: true, metrics: '0.0.0.0:9400' });
  assert.deepEqual(personalEngineCommand(flags, runtime).args.slice(1), ['engine', '--until-stdin-closes', '--no-demo', '--metrics', '0.0.0.0:9400']);
});

test('the personal engine is `gpushare engine` on the app\'s own binary as Node, from the same build, ending with the app', () => {
  const command = personalEngineCommand({ simulate: 'a100-40gb', noDemo: true }, runtime);
  assert.equal(command.command, '/opt/gpushare/gpushare');
  assert.deepEqual(command.args, ['/opt/gpushare/resources/app/electron/cli/gpushare.js', 'engine', '--until-stdin-closes', '--simulate', 'a100-40gb', '--no-demo']);
  assert.equal(command.env.ELECTRON_RUN_AS_NODE, '1');
  assert.equal(command.env.GPUSHARE_DIST, '/opt/gpushare/resources/app/dist');
  assert.equal(command.env.HOME, '/home/alice', 'the user\'s own environment otherwise');
  assert.deepEqual(personalEngineCommand({ simulate: undefined, noDemo: false }, runtime).args.slice(1), ['engine', '--until-stdin-closes'], 'the real driver, with the demo where it falls back');
});
