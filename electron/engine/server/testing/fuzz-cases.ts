// The fuzz test's cases, drawn from a seeded PRNG: requests with mutated params for every API method, mutated
// envelopes and JSON, invalid UTF-8, oversized messages, odd HTTP requests, and each case issue 16 found.
// A request to a method that changes state is always made invalid, so the engine must refuse it and change nothing.
import { API_METHODS, type ApiMethod } from '../../../../shared/api.js';
import type { SeededRandom } from '../../testing/seeded-random.js';

/**
 * refused: every reply is a well-formed error; validation: an `invalid-request` error (a client's mistake, never `internal`);
 * any: replies may be results, errors must be well-formed; closes: the engine may close the connection (it names why).
 */
export type Expect = 'refused' | 'validation' | 'any' | 'closes';

export interface WireCase {
  label: string;
  payload: string | Buffer;
  expect: Expect;
}

export interface HttpCase {
  label: string;
  /** Request line and headers, without the final blank line. */
  head: string;
}

/** A job that exists in the engine under test: refused requests name it, so a wrongly accepted one would change it. */
export const FUZZ_JOB = 'j1';

type Kind = 'job' | 'int' | 'hz' | 'enum' | 'array' | 'object' | 'bool' | 'string';
interface Stateful {
  base: Record<string, unknown>;
  fields: Record<string, Kind>;
  required: string[];
}

const job = { job: 'job' as const };
// engine.stop is left out: it is meant to stop the engine under test.
const STATEFUL: Record<string, Stateful> = {
  'jobs.submit': { base: { argv: ['/bin/true'], gpu: 0 }, fields: { argv: 'array', gpu: 'int', cwd: 'string', priority: 'enum', memoryQuotaBytes: 'int', memoryRequestBytes: 'int', mode: 'enum', mpsSharePercent: 'int', migSlice: 'string', env: 'array' }, required: ['argv', 'gpu'] },
  'jobs.setPriority': { base: { job: FUZZ_JOB, priority: 'high' }, fields: { ...job, priority: 'enum' }, required: ['job', 'priority'] },
  'jobs.setQuota': { base: { job: FUZZ_JOB, bytes: 2 ** 30 }, fields: { ...job, bytes: 'int' }, required: ['job', 'bytes'] },
  'jobs.setMode': { base: { job: FUZZ_JOB, mode: 'exclusive' }, fields: { ...job, mode: 'enum', mpsSharePercent: 'int', migSlice: 'string' }, required: ['job', 'mode'] },
  'jobs.move': { base: { job: FUZZ_JOB, priority: 'high' }, fields: { ...job, priority: 'enum', memoryQuotaBytes: 'int', action: 'enum', gpu: 'int', mode: 'enum', mpsSharePercent: 'int', migSlice: 'string' }, required: ['job'] },
  'jobs.place': { base: { job: FUZZ_JOB, gpu: 0 }, fields: { ...job, gpu: 'int' }, required: ['job', 'gpu'] },
  'jobs.suspend': { base: { job: FUZZ_JOB }, fields: job, required: ['job'] },
  'jobs.resume': { base: { job: FUZZ_JOB }, fields: job, required: ['job'] },
  'jobs.park': { base: { job: FUZZ_JOB }, fields: job, required: ['job'] },
  'jobs.unpark': { base: { job: FUZZ_JOB }, fields: job, required: ['job'] },
  'jobs.terminate': { base: { job: FUZZ_JOB }, fields: job, required: ['job'] },
  'sampler.setRate': { base: { hz: 2 }, fields: { hz: 'hz' }, required: ['hz'] },
  'mps.start': { base: { gpu: 0 }, fields: { gpu: 'int' }, required: ['gpu'] },
  'mps.stop': { base: { gpu: 0 }, fields: { gpu: 'int' }, required: ['gpu'] },
  'mig.apply': { base: { gpu: 0, layout: ['3g.40gb'], dryRun: true }, fields: { gpu: 'int', jobs: 'string', layout: 'array', dryRun: 'bool' }, required: ['gpu'] },
  'policy.set': { base: { policy: {} }, fields: { policy: 'object' }, required: ['policy'] },
};
const READ_ONLY = (Object.keys(API_METHODS) as ApiMethod[]).filter((method) => API_METHODS[method].reads);
/** The methods whose success changes state (the audit lists reads too). */
export const changesState = (method: string): boolean => !(READ_ONLY as readonly string[]).includes(method);

const MB = 1024 * 1024;
const json = (value: unknown): string => JSON.stringify(value);
/** Nested `depth` arrays, as JSON text (JSON.stringify would overflow the stack building it). */
const deepArray = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const deepObject = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const SPECIAL_KEYS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'];

// Invalid for every field of its kind (never a value the schema takes: a case that is accepted would change state).
const INVALID: Record<Kind, () => string[]> = {
  job: () => ['12', 'null', '""', '"J1"', '"j"', '"j1 "', json('x'.repeat(25)), json('j'.repeat(MB - 200)), '{}', '[]', 'true', ...SPECIAL_KEYS.map(json)],
  int: () => ['-1', '1.5', '1e300', '-1e300', String(2 ** 60), String(Number.MAX_SAFE_INTEGER), '"NaN"', '"1"', '"Infinity"', '"-0"', 'true', '{}', '[]', '[0]', json('9'.repeat(MB - 200))],
  hz: () => ['0', '-1', '0.1', '11', '1e300', '-1e300', '"NaN"', '"2"', 'true', '{}', '[]', 'null'],
  enum: () => ['""', '"HIGH"', '"High"', '7', 'null', '{}', '[]', 'true', json('x'.repeat(MB - 200)), ...SPECIAL_KEYS.map(json)],
  array: () => ['{}', '"str"', '12', 'null', 'true', '[12]', '[{}]', '[""]', json(Array.from({ length: 5000 }, () => 'a')), json(['x'.repeat(900 * 1024)])],
  object: () => ['1', '"x"', '[]', 'null', 'true'],
  bool: () => ['"true"', '1', '0', 'null', '{}', '[]'],
  string: () => ['""', '12', 'true', '{}', '[]', json('x'.repeat(MB - 200)), json('x'.repeat(360 * 1024))],
};
const ANY_VALUE = (): string[] => ['null', '0', '-1', '1e300', '"NaN"', '""', 'true', '{}', '[]', '[null]', json('x'.repeat(1000)), '"j1"', '3', '"user"'];

const request = (id: number, method: string, paramsText: string): string => `{"kind":"request","id":${id},"method":${json(method)},"params":${paramsText}}`;

/** An object's JSON text with each entry's value given as text (keys like __proto__ kept as keys). */
const objectText = (entries: Array<[string, string]>): string => `{${entries.map(([k, v]) => `${json(k)}:${v}`).join(',')}}`;
const entriesOf = (base: Record<string, unknown>): Array<[string, string]> => Object.entries(base).map(([k, v]) => [k, json(v)]);

/** Params that the method's schema must refuse: one field made invalid, a required one left out, an unknown key, or no object at all. */
function invalidParams(rnd: SeededRandom, spec: Stateful): { text: string; what: string } {
  const entries = entriesOf(spec.base);
  switch (rnd.int(5)) {
    case 0: {
      const field = rnd.pick(Object.keys(spec.fields));
      const value = rnd.pick(INVALID[spec.fields[field]]());
      return { text: objectText([...entries.filter(([k]) => k !== field), [field, value]]), what: `${field} = ${value.slice(0, 40)}` };
    }
    case 1: {
      const field = rnd.pick(spec.required);
      return { text: objectText(entries.filter(([k]) => k !== field)), what: `without ${field}` };
    }
    case 2: {
      const key = rnd.pick([...SPECIAL_KEYS, 'x', 'JOB', '']);
      return { text: objectText([...entries, [key, rnd.pick(ANY_VALUE())]]), what: `unknown key ${json(key)}` };
    }
    case 3: {
      const text = rnd.pick(['null', '[]', '"params"', '12', 'true', deepArray(20_000), deepObject(20_000)]);
      return { text, what: `params ${text.slice(0, 20)}` };
    }
    default: {
      const field = rnd.pick(Object.keys(spec.fields));
      return { text: objectText([...entries.filter(([k]) => k !== field), [field, rnd.pick([deepArray(20_000), deepObject(100)])]]), what: `${field} nested deep` };
    }
  }
}

/** Params for a method that changes nothing: anything, valid or not. */
function anyParams(rnd: SeededRandom): string {
  switch (rnd.int(4)) {
    case 0:
      return '{}';
    case 1:
      return objectText([[rnd.pick([...SPECIAL_KEYS, 'limit', 'seconds', 'gpu', 'since', 'by', 'includeFinished']), rnd.pick(ANY_VALUE())]]);
    case 2:
      return rnd.pick(['null', '[]', '"x"', '1', deepArray(20_000)]);
    default:
      return objectText([['gpu', rnd.pick(['0', '1', '-1', '64', '1e300'])]]);
  }
}

const KNOWN_WIRE_CASES = (id: () => number): WireCase[] => [
  // issue 16: a rejected 20,000-deep request, then the audit list that used to throw reading it back
  { label: 'issue 16: params nested 20,000 deep', payload: request(id(), 'jobs.setPriority', deepObject(20_000)), expect: 'validation' },
  { label: 'issue 16: audit.list after a deep request', payload: request(id(), 'audit.list', '{}'), expect: 'any' },
  { label: 'issue 16: reports.query 0 to MAX_SAFE_INTEGER', payload: request(id(), 'reports.query', objectText([['since', '0'], ['until', String(Number.MAX_SAFE_INTEGER)], ['by', '"user"']])), expect: 'validation' },
  { label: 'issue 16: reports.query since 1e300', payload: request(id(), 'reports.query', objectText([['since', '1e300'], ['by', '"user"']])), expect: 'validation' },
  { label: 'issue 16: reports.query until before since', payload: request(id(), 'reports.query', objectText([['since', String(Date.UTC(2025, 0, 2))], ['until', String(Date.UTC(2025, 0, 1))], ['by', '"user"']])), expect: 'validation' },
  { label: 'issue 16: mig.apply with a 360 KB job string', payload: request(id(), 'mig.apply', objectText([['gpu', '0'], ['jobs', json('10G,'.repeat(90 * 1024))], ['dryRun', 'true']])), expect: 'validation' },
  ...SPECIAL_KEYS.map((key) => ({ label: `issue 16: unknown key ${key}`, payload: request(id(), 'sampler.setRate', objectText([['hz', '2'], [key, '{"hz":5}']])), expect: 'validation' as const })),
  { label: 'issue 16: audit.list after the special keys', payload: request(id(), 'audit.list', '{"limit":10000}'), expect: 'any' },
  // the envelope
  ...['null', '12', '"str"', '[]', 'true', '{}', '{"kind":"request"}', '{"kind":"response","id":1}', '{"kind":"event"}'].map((text) => ({ label: `envelope ${text}`, payload: text, expect: 'refused' as const })),
  ...['"7"', '-5', 'null', '{}', '1e300'].map((idText) => ({ label: `id ${idText}`, payload: `{"kind":"request","id":${idText},"method":"sampler.setRate","params":{"hz":"NaN"}}`, expect: 'refused' as const })),
  ...[...SPECIAL_KEYS, '', 'jobs.list ', 'JOBS.LIST', 'x'.repeat(500 * 1024)].map((method) => ({ label: `method ${json(method).slice(0, 30)}`, payload: request(id(), method, '{}'), expect: 'refused' as const })),
  ...['12', 'null', '{}', '[]', '{"toString":1}', '{"valueOf":null,"toString":null}'].map((method) => ({ label: `method ${method}`, payload: `{"kind":"request","id":${id()},"method":${method},"params":{}}`, expect: 'refused' as const })),
  { label: 'subscribe to odd events', payload: '{"kind":"subscribe","events":["__proto__","constructor",12,null,{},"snapshot"]}', expect: 'any' },
  { label: 'subscribe without a list', payload: '{"kind":"subscribe","events":{"length":1e9}}', expect: 'any' },
  { label: 'a lone surrogate in a string', payload: request(id(), 'jobs.setPriority', '{"job":"\\ud800","priority":"high"}'), expect: 'refused' },
  // bytes that are not UTF-8 (the WebSocket closes 1007; the socket decodes them as U+FFFD and refuses the JSON)
  ...[[0xff, 0xfe], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0x7b, 0x22, 0xe2, 0x82]].map((bytes) => ({ label: `not UTF-8 ${bytes.join(',')}`, payload: Buffer.from(bytes), expect: 'closes' as const })),
  // past the bound: the socket answers and closes, the WebSocket closes 1009
  { label: 'a 1.5 MB message', payload: request(id(), 'jobs.list', objectText([['x', json('x'.repeat(1.5 * MB))]])), expect: 'closes' },
];

/** `count` cases for a unix socket or WebSocket client; the same seed gives the same cases. */
export function wireCases(rnd: SeededRandom, count: number, options: { tenMegabytes: boolean }): WireCase[] {
  let nextId = 1;
  const id = (): number => nextId++;
  const cases = KNOWN_WIRE_CASES(id);
  if (options.tenMegabytes) cases.push({ label: 'issue 16: a 10 MB message', payload: 'x'.repeat(10 * MB), expect: 'closes' });
  // issue 16: rejected 900 KB submits (600 of them grew RSS to 2 GB); fewer here, the RSS bound still shows growth
  for (let i = 0; i < 40; i++) cases.push({ label: 'issue 16: a rejected 900 KB submit', payload: request(id(), 'jobs.submit', objectText([['argv', json(['x'.repeat(900 * 1024)])], ['gpu', '"none"']])), expect: 'refused' });
  const stateful = Object.keys(STATEFUL);
  while (cases.length < count) {
    const roll = rnd.int(10);
    if (roll < 5) {
      const method = rnd.pick(stateful);
      const params = invalidParams(rnd, STATEFUL[method]);
      cases.push({ label: `${method} ${params.what}`, payload: request(id(), method, params.text), expect: 'refused' });
    } else if (roll < 7) {
      const method = rnd.pick(READ_ONLY);
      cases.push({ label: `${method} any params`, payload: request(id(), method, anyParams(rnd)), expect: 'any' });
    } else if (roll < 9) {
      cases.push({ label: 'mutated JSON', payload: mutate(rnd, request(id(), rnd.pick(READ_ONLY), anyParams(rnd).slice(0, 2000))), expect: 'any' });
    } else {
      cases.push({ label: 'random text', payload: randomText(rnd), expect: 'refused' });
    }
  }
  return cases;
}

/** A few random edits of text: a character changed, dropped or added, or the end cut off. */
function mutate(rnd: SeededRandom, text: string): string {
  let out = text;
  for (let edits = 1 + rnd.int(4); edits > 0; edits--) {
    const at = rnd.int(out.length);
    const char = rnd.pick(['{', '}', '[', ']', '"', ':', ',', '\\', '0', 'e', '-', 'n', ' ', '\u0000', '\u2028', 'é']);
    const op = rnd.int(4);
    if (op === 0) out = out.slice(0, at) + char + out.slice(at + 1);
    else if (op === 1) out = out.slice(0, at) + out.slice(at + 1);
    else if (op === 2) out = out.slice(0, at) + char + out.slice(at);
    else out = out.slice(0, Math.max(1, at));
  }
  return out.replaceAll('\n', ' ');
}

function randomText(rnd: SeededRandom): string {
  const length = 1 + rnd.int(rnd.chance(0.1) ? 5000 : 60);
  let text = '';
  for (let i = 0; i < length; i++) text += String.fromCharCode(rnd.chance(0.8) ? 32 + rnd.int(95) : 1 + rnd.int(0xd7ff));
  return text.replaceAll('\n', ' ').trim() || 'x';
}

const PATH_PARTS = ['%E0%A4%A', '%ZZ', '%', '%00', '%2e%2e', '..', '', '\\', '%C0%AF', '%ff', 'assets', 'index.html', 'api', '%F0%9F%98%80', '%2F', ';', '?token=%E0%A4%A', '#x', 'a'];

/** `count` raw HTTP requests to the console's server at port; the same seed gives the same requests. */
export function httpCases(rnd: SeededRandom, count: number, port: number, token: string): HttpCase[] {
  const host = `Host: 127.0.0.1:${port}`;
  const upgrade = 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==';
  const cases: HttpCase[] = [
    { label: 'issue 16: GET /%E0%A4%A', head: `GET /%E0%A4%A HTTP/1.1\r\n${host}` },
    { label: 'a target that is no URL', head: `GET http://[ HTTP/1.1\r\n${host}` },
    { label: 'asterisk target', head: `GET * HTTP/1.1\r\n${host}` },
    { label: 'a 20 KB path', head: `GET /${'a'.repeat(20 * 1024)} HTTP/1.1\r\n${host}` },
    { label: 'no Host', head: 'GET / HTTP/1.1' },
    { label: 'another Host', head: 'GET / HTTP/1.1\r\nHost: evil.example' },
    { label: 'HTTP/1.0', head: 'GET /index.html HTTP/1.0' },
    { label: 'the token check, a bad token', head: `GET /api?token=%E0%A4%A HTTP/1.1\r\n${host}` },
    ...['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'BREW', 'CONNECT'].map((method) => ({ label: `method ${method}`, head: `${method} / HTTP/1.1\r\n${host}\r\nContent-Length: 0` })),
    { label: 'upgrade from another origin, right token', head: `GET /api?token=${token} HTTP/1.1\r\n${host}\r\nOrigin: http://evil.example\r\n${upgrade}` },
    { label: 'upgrade without Origin, right token', head: `GET /api?token=${token} HTTP/1.1\r\n${host}\r\n${upgrade}` },
    { label: 'upgrade with a bad token', head: `GET /api?token=%E0%A4%A HTTP/1.1\r\n${host}\r\nOrigin: http://127.0.0.1:${port}\r\n${upgrade}` },
    { label: 'upgrade to a target that is no URL', head: `GET http://[/api HTTP/1.1\r\n${host}\r\n${upgrade}` },
    { label: 'upgrade on another path', head: `GET /%E0%A4%A HTTP/1.1\r\n${host}\r\nOrigin: http://127.0.0.1:${port}\r\n${upgrade}` },
    { label: 'upgrade with a bad key, right origin and token', head: `GET /api?token=${token} HTTP/1.1\r\n${host}\r\nOrigin: http://127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: x` },
  ];
  while (cases.length < count) {
    const path = '/' + Array.from({ length: 1 + rnd.int(5) }, () => rnd.pick(PATH_PARTS)).join(rnd.pick(['/', '', '//']));
    const method = rnd.pick(['GET', 'GET', 'GET', 'HEAD', 'POST']);
    cases.push({ label: `${method} ${path}`, head: `${method} ${path} HTTP/1.1\r\n${host}${method === 'POST' ? '\r\nContent-Length: 0' : ''}` });
  }
  return cases;
}
