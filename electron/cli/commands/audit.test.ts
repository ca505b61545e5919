// gpushare audit follows audit.list's pages: every entry once, newest first, as many as asked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUDIT_PAGE_MAX } from '../../../shared/api.js';
import type { Caller } from '../../engine/api/dispatcher.js';
import { Engine } from '../../engine/engine.js';
import { noGpus } from '../../engine/store/testing/synthetic.js';
import { readAuditPages, renderAudit } from './audit.js';
import { realBackend } from '../../engine/gpu/gpu-backend.js';

test('readAuditPages follows the pages to the oldest entry, or stops at the count asked; each entry once, newest first', async () => {
  const engine = new Engine(realBackend(noGpus, () => undefined));
  engine.dispatcher.register('settings.set', ({ preferences }) => preferences);
  const total = 2 * AUDIT_PAGE_MAX + 500;
  for (let i = 0; i < total; i++) await engine.call('settings.set', { preferences: {} });
  const calls: unknown[] = [];
  const api = { call: ((method: 'audit.list', params: { limit?: number; before?: number }) => (calls.push(params), engine.call(method, params))) as Engine['call'] };
  const all = await readAuditPages(api, Infinity);
  assert.equal(all.length, total);
  assert.deepEqual(all.map((e) => e.id), Array.from({ length: total }, (_, i) => total - i));
  assert.equal(calls.length, 3, 'three pages');
  const some = await readAuditPages(engine, 1200);
  assert.deepEqual(some.map((e) => e.id), all.slice(0, 1200).map((e) => e.id));
});

test('a summary of refusals shows as one row with its count and the methods it counts', async () => {
  const engine = new Engine(realBackend(noGpus, () => undefined));
  const mallory: Caller = { uid: 4242, gid: 4242, groups: [], user: 'mallory', pid: null, admin: false, via: 'socket' };
  for (let i = 0; i < 12; i++) await assert.rejects(engine.dispatcher.dispatch('jobs.terminate', { job: `j${i}` }, mallory));
  const text = renderAudit(await readAuditPages(engine, Infinity), 200);
  assert.match(text.split('\n')[1], /mallory +jobs\.terminate ×7 +7 more unsupported refusals past the first 5 this hour/);
  assert.equal(text.split('\n').length, 1 + 6);
});
