// The tray follows the conditions that hold now, not the alerts of the last minutes; its menu has "Lab…" as the console has its Lab tab.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActiveCondition } from '../../shared/api.js';
import { labWindowAmong, TRAY_TOOLTIPS, trayMenu, trayState, trayTooltip } from './tray-state.js';

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

test('the menu has "Lab…" by the Lab tab\'s rule: a lab list, or one with a mistake; none without a list', () => {
  const labels = (lab: Parameters<typeof trayMenu>[0]) => trayMenu(lab).map((item) => ('separator' in item ? '—' : item.label));
  assert.deepEqual(labels({ boxes: [], problem: null }), ['Show gpushare', 'Pause my best-effort jobs', '—', 'Quit'], 'no lab list: no Lab item');
  assert.deepEqual(labels({ boxes: ['box1', 'box2'], problem: null }), ['Show gpushare', 'Lab…', 'Pause my best-effort jobs', '—', 'Quit']);
  const mistake = { boxes: [], problem: '/home/alice/.config/gpushare/lab.json: boxes[0] ("box1"): unknown key "shh"' };
  assert.deepEqual(labels(mistake), labels({ boxes: ['box1'], problem: null }), 'a list with a mistake keeps the item: the Lab window names the mistake');
  assert.deepEqual(trayMenu(mistake).find((item) => 'action' in item && item.label === 'Lab…'), { label: 'Lab…', action: 'lab' });
});

test('"Lab…" focuses the window already showing the Lab view, else opens one; a box\'s console or this box\'s is not it', () => {
  const PAGE = 'app://console/index.html';
  assert.equal(labWindowAmong([PAGE, `${PAGE}?lab=1`]), 1);
  assert.equal(labWindowAmong([`${PAGE}?lab=1#reports`]), 0);
  assert.equal(labWindowAmong([PAGE, `${PAGE}?box=box1`]), null, 'a box\'s console is no Lab window');
  assert.equal(labWindowAmong([]), null);
});
