// The tray follows the conditions that hold now, not the alerts of the last minutes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActiveCondition } from '../../shared/api.js';
import { TRAY_TOOLTIPS, trayState, trayTooltip } from './tray-state.js';

const condition = (kind: ActiveCondition['kind'], severity: ActiveCondition['severity'] = 'warning'): ActiveCondition => ({ kind, severity, gpu: 0, jobId: null, message: `${kind} now` });

test('the tray shows alert over contention over all well, from the active conditions', () => {
  assert.equal(trayState([]), 'ok');
  assert.equal(trayState([condition('contention')]), 'contention');
  assert.equal(trayState([condition('contention'), condition('gpu-lost', 'error')]), 'alert');
  assert.equal(trayState([condition('quota')]), 'alert');
  assert.equal(trayState([condition('out-of-memory')]), 'alert');
  assert.equal(trayState([condition('waiting', 'info')]), 'ok', 'a job waiting for memory is no alarm');
  assert.equal(trayState([condition('waiting', 'error')]), 'alert', 'any error is');
});

test('a condition that has ended leaves the tray at once, however recent its alert', () => {
  const lost = [condition('gpu-lost', 'error')];
  assert.equal(trayState(lost), 'alert');
  assert.equal(trayState([]), 'ok', 'the GPU came back: the list no longer holds it');
  assert.match(TRAY_TOOLTIPS.alert, /alert/);
});

test('the tooltip names what holds now', () => {
  assert.equal(trayTooltip([]), TRAY_TOOLTIPS.ok);
  assert.equal(trayTooltip([condition('gpu-lost', 'error'), condition('contention')]), 'gpushare — gpu-lost now (and 1 more)');
});
