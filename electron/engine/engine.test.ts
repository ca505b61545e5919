// The engine's own alerts and its list of current conditions: GPU-lost onsets, conditions emitted only on change.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActiveCondition } from '../../shared/api.js';
import type { Alert } from '../../shared/jobs.js';
import { Engine } from './engine.js';
import { fakeGpu, noGpus, fakeTicks } from './store/testing/synthetic.js';
import { realBackend } from './gpu/gpu-backend.js';

function engineWithRecorders() {
  const engine = new Engine(realBackend(noGpus, () => undefined));
  const alerts: Alert[] = [];
  const conditions: ActiveCondition[][] = [];
  engine.events.on('alert', (a) => alerts.push(a));
  engine.events.on('conditions', (c) => conditions.push(c));
  return { engine, alerts, conditions };
}

test('a GPU that becomes lost raises one gpu-lost error per onset, none while it stays lost, and is a condition while lost', async () => {
  const { engine, alerts, conditions } = engineWithRecorders();
  const tick = fakeTicks(1000);
  const lostPattern = [false, true, true, true, false, true, true];
  lostPattern.forEach((lost, k) => engine.events.emit('snapshot', tick(1000 * k, [fakeGpu(0), { ...fakeGpu(1), lost }], [])));
  assert.deepEqual(alerts.map((a) => [a.kind, a.severity, a.gpu]), [['gpu-lost', 'error', 1], ['gpu-lost', 'error', 1]]);
  assert.match(alerts[0].message, /GPU 1 \(Synthetic GPU 1\) is lost/);
  assert.deepEqual(conditions.map((list) => list.map((c) => `${c.kind}:${c.gpu}`)), [['gpu-lost:1'], [], ['gpu-lost:1']]);
  assert.deepEqual((await engine.call('alerts.active', {})).map((c) => [c.kind, c.severity, c.gpu, c.jobId]), [['gpu-lost', 'error', 1, null]]);
});

test('setConditions emits "conditions" only when the list changed; the scheduler\'s and the GPUs\' conditions are one list', async () => {
  const { engine, conditions } = engineWithRecorders();
  const contention: ActiveCondition = { kind: 'contention', severity: 'warning', gpu: 0, jobId: 'j3', message: 'j3 and j4 contend on GPU 0.' };
  engine.setConditions([contention]);
  engine.setConditions([{ ...contention }]); // the same, evaluated again
  assert.equal(conditions.length, 1);
  engine.events.emit('snapshot', fakeTicks(1000)(0, [{ ...fakeGpu(1), lost: true }], []));
  engine.setConditions([{ ...contention }]);
  assert.deepEqual(conditions.map((list) => list.map((c) => c.kind)), [['contention'], ['contention', 'gpu-lost']]);
  engine.setConditions([]);
  assert.deepEqual(conditions.at(-1)!.map((c) => c.kind), ['gpu-lost'], 'clearing the scheduler\'s list keeps the GPU\'s');
  assert.deepEqual((await engine.call('alerts.active', {})).map((c) => c.kind), ['gpu-lost']);
  assert.throws(() => engine.setConditions([{ ...contention, severity: 'fatal' as never }]), /conditions\[0\]\.severity: must be one of "info", "warning", "error"/);
  assert.deepEqual((await engine.call('alerts.active', {})).map((c) => c.kind), ['gpu-lost'], 'a bad list changes nothing');
});
