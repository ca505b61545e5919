// Every field a client can send has a bound, and every client mistake is a validation error naming the field.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { apiSchemas, type ApiMethod } from '../../../shared/api.js';
import { SHARING_MODES } from '../../../shared/jobs.js';
import type { Schema } from '../../../shared/schema.js';
import { Engine } from '../engine.js';
import { listenOnSocket } from '../server/socket-server.js';
import { attachUsageStore } from '../store/attach.js';
import { noGpus } from '../store/testing/synthetic.js';
import { DAY_MS, UsageStore } from '../store/usage-store.js';
import { toErrorBody } from './api-error.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-api-bounds-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every leaf of a schema that lacks a bound, as "path: what is missing". */
function unbounded(schema: Schema<unknown>, path: string): string[] {
  const info = schema.info;
  if (!info) return [`${path}: a schema that cannot be inspected (give it an info)`];
  switch (info.type) {
    case 'number':
      return info.min === undefined || info.max === undefined ? [`${path}: a number without ${info.min === undefined ? 'a minimum' : 'a maximum'}`] : [];
    case 'string':
      return info.max === undefined ? [`${path}: a string without a maximum length`] : [];
    case 'array':
      return [...(info.max === undefined ? [`${path}: a list without a maximum number of items`] : []), ...unbounded(info.item, `${path}[]`)];
    case 'object':
      return Object.entries(info.shape).flatMap(([key, field]) => unbounded(field, `${path}.${key}`));
    case 'either':
      return info.options.flatMap((option) => unbounded(option, path));
    case 'boolean':
    case 'choice':
      return [];
  }
}

test('every field of every API method is bounded: numbers have a minimum and a maximum, strings and lists a maximum length', () => {
  const missing = (Object.keys(apiSchemas) as ApiMethod[]).flatMap((method) => unbounded(apiSchemas[method], method));
  assert.deepEqual(missing, []);
});

test('the bounds walk finds an unbounded field (it can fail)', async () => {
  const { number, object, string, array } = await import('../../../shared/schema.js');
  const probe = object({ a: number({ min: 0 }), b: array(string({ max: 3 })), c: string({ max: 5 }) });
  assert.deepEqual(unbounded(probe, 'probe'), ['probe.a: a number without a maximum', 'probe.b: a list without a maximum number of items']);
});

/** A fresh engine with a usage store behind reports.query. */
async function engineWithStore(name: string) {
  const engine = new Engine({ nvml: noGpus, simulated: null, close: () => undefined });
  const store = await UsageStore.open({ path: join(dir, `${name}.db`) });
  attachUsageStore(engine, store);
  after(() => store.close());
  return engine;
}

/** What a transport would answer the client. */
async function answer(engine: Engine, method: string, params: unknown) {
  try {
    await engine.dispatcher.dispatch(method, params, engine.owner);
    return { code: 'ok', message: '' };
  } catch (error) {
    return toErrorBody(error);
  }
}

const nested = (depth: number): unknown => {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

test('client mistakes are validation errors naming the field and its bound, never "internal"', async () => {
  const engine = await engineWithStore('mistakes');
  const now = Date.now();
  const cases: Array<[string, unknown, RegExp]> = [
    ['reports.query', { since: now - DAY_MS, until: now - 2 * DAY_MS, by: 'user' }, /^params\.until: must be after params\.since/],
    ['reports.query', { since: 1e300, by: 'user' }, /^params\.since: must be at most \d+/],
    ['reports.query', { since: 0, until: Number.MAX_SAFE_INTEGER, by: 'user' }, /^params\.since: must be at least 946684800000 ms since the epoch \(2000-01-01\)/],
    ['reports.query', { since: now - DAY_MS, until: now + 10 * DAY_MS, by: 'user' }, /^params\.until: must be at most a day from now/],
    ['reports.query', { since: Date.UTC(2001, 0, 1), until: now, by: 'user' }, /^params: the range spans \d+ days; at most \d+ days/],
    ['reports.export', { since: now - DAY_MS, until: now - DAY_MS, by: 'user', format: 'csv' }, /^params\.until: must be after params\.since/],
    ['audit.list', { limit: nested(20_000) }, /^params(\.limit)?: (must be a number|nests deeper than \d+ levels)/],
    ['jobs.setPriority', { job: nested(20_000), priority: 'high' }, /^params(\.job)?: (must be a string|nests deeper than \d+ levels)/],
    ['jobs.setPriority', nested(20_000), /^params: (must be an object|nests deeper than \d+ levels)/],
    ['sampler.setRate', { hz: { hz: { hz: 2 } } }, /^params\.hz: must be a number, got \{"hz":\{"hz":2\}\}/],
    ['mig.apply', { gpu: 0, jobs: 'x'.repeat(360_000) }, /^params\.jobs: must be at most \d+ characters/],
  ];
  const wrong: string[] = [];
  for (const [method, params, expected] of cases) {
    const body = await answer(engine, method, params);
    const ok = body.code === 'invalid-request' && expected.test(body.message) && body.message.length < 400;
    if (!ok) wrong.push(`${method} (expected ${expected}): ${body.code} ${body.message.slice(0, 160)}`);
  }
  assert.deepEqual(wrong, []);
});

test('a schema-valid report range answers with a bounded number of chart points', async () => {
  const engine = await engineWithStore('range');
  const now = Date.now();
  const report = await engine.call('reports.query', { since: now - 300 * DAY_MS, by: 'user' });
  assert.ok(report.series.points.length <= 60, `${report.series.points.length} points`);
});

/** One request over the engine's real unix socket; the answer's error or "ok". */
async function overSocket(path: string, line: string): Promise<{ ok: boolean; error?: { code: string; message: string } }> {
  const socket = createConnection(path);
  socket.setEncoding('utf8');
  socket.write(line + '\n');
  let buffer = '';
  for await (const chunk of socket) {
    buffer += chunk;
    if (buffer.includes('\n')) break;
  }
  socket.destroy();
  return JSON.parse(buffer.slice(0, buffer.indexOf('\n')));
}

test('the keys __proto__, constructor, toString and valueOf are unknown fields over the socket, and the request changes nothing', async () => {
  const engine = new Engine({ nvml: noGpus, simulated: null, close: () => undefined });
  const server = await listenOnSocket(engine, join(dir, 'proto.sock'));
  after(() => server.close());
  const rateBefore = engine.sampler.rateHz;
  for (const key of ['__proto__', 'constructor', 'toString', 'valueOf']) {
    for (const params of [`{"hz":2,"${key}":{"hz":9}}`, `{"hz":2,"${key}":1}`]) {
      const line = `{"kind":"request","id":1,"method":"sampler.setRate","params":${params}}`;
      const reply = await overSocket(server.path, line);
      assert.equal(reply.ok, false, `${params} was accepted`);
      assert.equal(reply.error?.code, 'invalid-request', params);
      assert.match(reply.error!.message, new RegExp(`^params\\.${key}: is not a known field \\(known: hz\\)`), params);
    }
  }
  assert.equal(engine.sampler.rateHz, rateBefore, 'no refused request changed the rate');
  const accepted = await overSocket(server.path, '{"kind":"request","id":1,"method":"sampler.setRate","params":{"hz":2}}');
  assert.equal(accepted.ok, true, 'the same request without the key is accepted (the refusal was the key)');
});

test('every field of every method, sent a value no field accepts, answers invalid-request naming that field in a short message', async (t) => {
  const engine = new Engine({ nvml: noGpus, simulated: null, close: () => undefined });
  const bad: Array<[string, unknown]> = [
    ['a huge string', 'x'.repeat(200_000)],
    ['1e300', 1e300],
    ['-1e300', -1e300],
    ['an object of unknown keys', { a: { b: { c: 1 } } }],
    ['20,000 nested lists', nested(20_000)],
  ];
  // a valid value for each required field, so the bad one is what gets refused
  const hour = Date.now() - 3_600_000;
  const valid: Record<string, unknown> = { job: 'j1', priority: 'high', argv: ['train'], gpu: 0, bytes: null, mode: SHARING_MODES[0], hz: 1, since: hour, by: 'user', format: 'csv', policy: {}, jobId: '1234' };
  // a field not named above: the least its schema accepts (a pattern-checked string needs an entry above)
  const example = (schema: Schema<unknown>, field: string): unknown => {
    if (Object.hasOwn(valid, field)) return valid[field];
    const info = schema.info!;
    switch (info.type) {
      case 'object':
        return Object.fromEntries(Object.entries(info.shape).filter(([, s]) => !('optional' in s)).map(([key, s]) => [key, example(s, key)]));
      case 'either':
        return example(info.options[0], field);
      case 'number':
        return info.min;
      case 'choice':
        return info.choices[0];
      case 'boolean':
        return false;
      case 'array':
        return [];
      case 'string':
        return 'x';
    }
  };
  const wrong: string[] = [];
  let tried = 0;
  for (const method of Object.keys(apiSchemas) as ApiMethod[]) {
    const info = apiSchemas[method].info;
    const base = example(apiSchemas[method], '') as Record<string, unknown>;
    assert.doesNotThrow(() => apiSchemas[method].parse(base, 'params'), `${method}: the valid base ${JSON.stringify(base)}`);
    for (const field of Object.keys(info.shape)) {
      for (const [what, value] of bad) {
        tried++;
        const body = await answer(engine, method, { ...base, [field]: value });
        const named = body.message.startsWith(`params.${field}`) || body.message.startsWith('params: nests deeper');
        if (body.code !== 'invalid-request' || !named || body.message.length >= 400) wrong.push(`${method}.${field} = ${what}: ${body.code} ${body.message.slice(0, 120)}`);
      }
    }
    for (const params of ['text', 5, [1, 2]]) {
      tried++;
      const body = await answer(engine, method, params);
      if (body.code !== 'invalid-request' || !/^params: must be an object, got /.test(body.message)) wrong.push(`${method} params ${JSON.stringify(params)}: ${body.code} ${body.message.slice(0, 120)}`);
    }
  }
  t.diagnostic(`${tried} refused requests, each answered invalid-request naming its field`);
  assert.deepEqual(wrong, []);
  assert.ok(tried > 200, `${tried} requests tried`);
});
