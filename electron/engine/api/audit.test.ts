// The audit log keeps what was asked in bounded form: never raw params, a byte cap per row,
// and an audit row can never be what fails the store's batch (and drops its samples).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { API_METHODS, isReadMethod, type ApiMethod } from '../../../shared/api.js';
import type { AuditEntry } from '../../../shared/jobs.js';
import type { Caller } from './dispatcher.js';
import { Engine } from '../engine.js';
import { listenOnSocket } from '../server/socket-server.js';
import { fakeGpu, fakeTicks, noGpus } from '../store/testing/synthetic.js';
import { UsageStore } from '../store/usage-store.js';
import { AUDIT_PARAMS_MAX_BYTES, AUDIT_RESULT_MAX_CHARS, NOT_KEPT, type NotKept } from './audit-summary.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-audit-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const bareEngine = () => new Engine({ nvml: noGpus, simulated: null, close: () => undefined });
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
/** `depth` lists around "x", and the same as JSON text (JSON.stringify itself overflows the stack on it). */
const deep = (depth: number): { value: unknown; json: string } => {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = [value];
  return { value, json: '['.repeat(depth) + '"x"' + ']'.repeat(depth) };
};
const notKept = (entry: AuditEntry): NotKept => (entry.params as Record<string, NotKept>)[NOT_KEPT];

test('a refused request 20,000 levels deep is audited as a bounded summary with the size and digest of the whole; audit.list still answers', async () => {
  const engine = bareEngine();
  const { value, json } = deep(20_000);
  await assert.rejects(engine.call('jobs.setPriority', { job: value, priority: 'high' } as never), { name: 'ValidationError' });
  const list = await engine.call('audit.list', {});
  const text = JSON.stringify(list); // what every transport does with the answer
  const entry = list[0];
  assert.equal(entry.what, 'jobs.setPriority');
  assert.ok(JSON.stringify(entry.params).length <= AUDIT_PARAMS_MAX_BYTES, `${JSON.stringify(entry.params).length} bytes`);
  assert.equal((entry.params as { priority: string }).priority, 'high', 'a field it understood is kept');
  const whole = `{"job":${json},"priority":"high"}`;
  assert.deepEqual(notKept(entry), { bytes: whole.length, sha256: sha256(whole) });
  assert.ok(text.length < 4096, `audit.list answered ${text.length} bytes`);
});

test('a refused 900 KB submit keeps its fields cut short, names its unknown keys, and 100 of them stay within the row cap (the first 5 in full, one row counting the rest)', async () => {
  const engine = bareEngine();
  const params = { argv: ['x'.repeat(900_000)], gpu: 'auto', bogus: { a: 1 } };
  for (let i = 0; i < 100; i++) await assert.rejects(engine.call('jobs.submit', params as never));
  const entries = engine.dispatcher.auditLog(10_000);
  assert.deepEqual(entries.map((e) => e.count ?? 1), [95, 1, 1, 1, 1, 1]);
  const entry = entries[1];
  const argv = (entry.params as { argv: string[] }).argv;
  assert.match(argv[0], /^x{120}… \(900000 characters\)$/);
  assert.equal((entry.params as { gpu: string }).gpu, 'auto');
  const whole = JSON.stringify(params);
  assert.deepEqual(notKept(entry), { bytes: whole.length, sha256: sha256(whole), unknownKeys: ['bogus'] });
  assert.ok(!('bogus' in (entry.params as object)), 'an unknown key\'s value is not kept');
  const kept = JSON.stringify(entries).length;
  assert.ok(kept <= 100 * (AUDIT_PARAMS_MAX_BYTES + AUDIT_RESULT_MAX_CHARS + 200), `100 rows keep ${kept} bytes`);
});

test('an accepted request is audited with its params as they were; an environment only by its size', async () => {
  const engine = bareEngine();
  await engine.call('sampler.setRate', { hz: 2 });
  assert.deepEqual(engine.dispatcher.auditLog(1)[0].params, { hz: 2 });
  // jobs.submit is not registered on a bare engine: refused after its params were checked
  await assert.rejects(engine.call('jobs.submit', { argv: ['train'], gpu: 0, env: ['TOKEN=secret-value', 'HOME=/root'] }), { code: 'unsupported' });
  const entry = engine.dispatcher.auditLog(1)[0];
  assert.deepEqual(entry.params, { argv: ['train'], gpu: 0, env: '2 variables (not kept)' });
  assert.doesNotMatch(JSON.stringify(entry), /secret-value/);
});

test('a long error message is cut in its audit row', async () => {
  const engine = bareEngine();
  engine.dispatcher.useJobOwners(() => null); // a job method's owner is checked before its handler: this engine has no jobs
  engine.dispatcher.register('jobs.terminate', () => {
    throw new Error('y'.repeat(100_000));
  });
  await assert.rejects(engine.call('jobs.terminate', { job: 'j1' }));
  const entry = engine.dispatcher.auditLog(1)[0];
  assert.ok(entry.result.length <= AUDIT_RESULT_MAX_CHARS + 40, `${entry.result.length} characters`);
  assert.match(entry.result, /\(100016 characters\)$/);
});

test('audit.list over the socket answers after refused requests 20,000 and 60 levels deep (the engine stays up)', async () => {
  const engine = bareEngine();
  const server = await listenOnSocket(engine, join(dir, 'audit.sock'));
  after(() => server.close());
  const socket = createConnection(server.path);
  socket.setEncoding('utf8');
  // 20,000 levels: the transport may refuse the line itself; 60: the transport passes it, the dispatcher refuses it
  for (const [id, depth] of [[1, 20_000], [2, 60]]) {
    socket.write(`{"kind":"request","id":${id},"method":"jobs.setPriority","params":{"job":${deep(depth).json},"priority":"high"}}\n`);
  }
  socket.write('{"kind":"request","id":3,"method":"audit.list","params":{}}\n');
  let buffer = '';
  for await (const chunk of socket) {
    buffer += chunk;
    if (buffer.split('\n').length > 3) break;
  }
  socket.destroy();
  const [first, second, list] = buffer.split('\n').slice(0, 3).map((line) => JSON.parse(line));
  assert.deepEqual([first.error.code, second.error.code], ['invalid-request', 'invalid-request']);
  assert.match(second.error.message, /^params: nests deeper than 16 levels/);
  assert.equal(list.ok, true);
  const audited = list.result.filter((e: AuditEntry) => e.what === 'jobs.setPriority');
  assert.ok(audited.length >= 1, 'the 60-deep request reached the dispatcher and is audited');
  for (const entry of audited) assert.ok(JSON.stringify(entry.params).length <= AUDIT_PARAMS_MAX_BYTES);
});

test('an audit row can never fail the store batch it is in: its samples are written', async () => {
  const store = await UsageStore.open({ path: join(dir, 'usage.db'), onNotice: () => undefined });
  after(() => store.close());
  const tick = fakeTicks(1000);
  const t = Date.now() - 10_000;
  for (let k = 0; k < 3; k++) store.ingest(tick(t + 1000 * k, [fakeGpu(0)], [{ pid: 4242, gpu: 0, user: 'alice', sm: 50, mem: 2 ** 30 }]));
  // an entry recorded raw (not through the dispatcher): the store bounds it as it writes
  store.recordAudit({ id: 1, at: t, who: 'alice', what: 'jobs.setPriority', params: { job: deep(20_000).value, priority: 'high' }, result: 'z'.repeat(100_000) });
  await store.flush();
  assert.deepEqual(store.notices, []);
  const samples = await store.db.get<{ n: number }>('SELECT count(*) AS n FROM samples');
  assert.equal(samples?.n, 3, 'the batch\'s samples were written');
  const row = await store.db.get<{ params: string; result: string }>('SELECT params, result FROM audit');
  assert.ok(row && row.params.length <= AUDIT_PARAMS_MAX_BYTES, `${row?.params.length} bytes of params`);
  assert.ok(row.result.length <= AUDIT_RESULT_MAX_CHARS + 40);
  assert.equal(JSON.parse(row.params).priority, 'high');
});

test('the store writes the dispatcher\'s summary as it is (its digest is of the request, not of the summary)', async () => {
  const engine = bareEngine();
  const store = await UsageStore.open({ path: join(dir, 'usage-attached.db'), onNotice: () => undefined });
  after(() => store.close());
  engine.dispatcher.onAudit((entry) => store.recordAudit(entry));
  await assert.rejects(engine.call('jobs.submit', { argv: ['x'.repeat(50_000)], gpu: 'auto', __proto__x: 1, toString: 2 } as never));
  await store.flush();
  const row = await store.db.get<{ params: string }>('SELECT params FROM audit');
  assert.deepEqual(JSON.parse(row!.params), engine.dispatcher.auditLog(1)[0].params);
  assert.deepEqual(notKept(engine.dispatcher.auditLog(1)[0]).unknownKeys, ['__proto__x', 'toString']);
});

test('a refused request with a "__proto__" key is audited with that key named, as an own field of nothing', async () => {
  const engine = bareEngine();
  await assert.rejects(engine.call('sampler.setRate', JSON.parse('{"hz":2,"__proto__":{"polluted":true}}')));
  const entry = engine.dispatcher.auditLog(1)[0];
  assert.deepEqual(notKept(entry).unknownKeys, ['__proto__']);
  assert.equal((entry.params as { polluted?: boolean }).polluted, undefined);
  assert.equal(({} as { polluted?: boolean }).polluted, undefined);
});

test('reads are not audited: none of the read methods leaves an audit row (settings.get among them), and every change does', async () => {
  const engine = bareEngine();
  const methods = Object.keys(API_METHODS) as ApiMethod[];
  const reads = methods.filter(isReadMethod);
  assert.ok(reads.includes('settings.get') && reads.includes('audit.list') && !reads.includes('settings.set'));
  for (const method of reads) await engine.dispatcher.dispatch(method, {}, engine.owner).catch(() => undefined);
  assert.deepEqual(engine.dispatcher.auditLog().map((e) => e.what), []);
  const changes = methods.filter((m) => !isReadMethod(m));
  for (const method of changes) await engine.dispatcher.dispatch(method, {}, engine.owner).catch(() => undefined);
  const audited = engine.dispatcher.auditLog(1000).flatMap((e) => (e.count === undefined ? [e.what] : Object.keys((e.params as { refused: object }).refused)));
  assert.deepEqual(new Set(audited), new Set(changes));
});

test('params that cannot even be read are audited without them, and the request gets its own answer', async () => {
  const engine = bareEngine();
  const hostile = new Proxy({}, { ownKeys: () => { throw new Error('no keys for you'); } });
  await assert.rejects(engine.call('jobs.terminate', hostile as never));
  const entry = engine.dispatcher.auditLog(1)[0];
  assert.equal(entry.what, 'jobs.terminate');
  assert.match(notKept(entry).note ?? '', /^could not be summarised: no keys for you/);
});

const mallory: Caller = { uid: 4242, gid: 4242, groups: [], user: 'mallory', pid: null, admin: false, via: 'socket' };
const alice: Caller = { uid: 4343, gid: 4343, groups: [], user: 'alice', pid: null, admin: false, via: 'socket' };
const root: Caller = { uid: 0, gid: 0, groups: [], user: 'root', pid: null, admin: true, via: 'socket' };

test('refusals are kept as counted summaries per user and reason: the first few in full, then one row that counts the rest; accepted changes always in full', async () => {
  const engine = bareEngine();
  engine.dispatcher.register('settings.set', ({ preferences }) => preferences);
  for (let i = 0; i < 50; i++) await assert.rejects(engine.dispatcher.dispatch('jobs.terminate', { job: `j${i}` }, mallory));
  for (let i = 0; i < 30; i++) await engine.dispatcher.dispatch('settings.set', { preferences: {} }, alice);
  const log = engine.dispatcher.auditLog(10_000) ;
  const hers = log.filter((e) => e.who === 'mallory');
  assert.ok(hers.length <= 6, `${hers.length} rows for 50 refusals`);
  assert.equal(hers.reduce((sum, e) => sum + (e.count ?? 1), 0), 50, 'every refusal is counted');
  assert.equal(log.filter((e) => e.who === 'alice' && e.result === 'ok').length, 30, 'every accepted change is a row of its own');
});

test('audit.list pages: a bounded page, newest first, and the next page from a cursor; a non-administrator sees only their own entries', async () => {
  const engine = bareEngine();
  engine.dispatcher.register('settings.set', ({ preferences }) => preferences);
  for (let i = 0; i < 25; i++) await engine.dispatcher.dispatch('settings.set', { preferences: {} }, i % 2 ? alice : mallory);
  const first = await engine.dispatcher.dispatch('audit.list', { limit: 10 }, root) as AuditEntry[];
  assert.equal(first.length, 10);
  const second = await engine.dispatcher.dispatch('audit.list', { limit: 10, before: first[9].id }, root) as AuditEntry[];
  assert.deepEqual(second.map((e) => e.id), first.map((e) => e.id - 10));
  const tooMany = await engine.dispatcher.dispatch('audit.list', { limit: 100_000 }, root).catch((error: Error) => error.message);
  assert.match(String(tooMany), /^params\.limit: must be at most 1000/);
  const hers = await engine.dispatcher.dispatch('audit.list', { limit: 1000 }, mallory) as AuditEntry[];
  assert.deepEqual([...new Set(hers.map((e) => e.who))], ['mallory']);
  assert.equal(hers.length, 13);
});
