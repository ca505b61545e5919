// The daemon's config file: a good file, a missing one (the defaults, said so), and every kind of
// bad one refused with the file, the line:column or the key, before anything is applied.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseDaemonConfig, resolveLimits } from '../../../shared/lab-policy.js';
import { number, object, optional } from '../../../shared/schema.js';
import { packageRoot } from '../paths.js';
import { defaultConfigText, loadDaemonConfig, writeDaemonConfig } from './config-file.js';
import { parseJsonStrict } from './config-file-json.js';

const isRoot = process.geteuid?.() === 0;
const dir = mkdtempSync(join(tmpdir(), 'gpushare-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function configFile(text: string): string {
  const file = join(dir, `config-${++files}.json`);
  writeFileSync(file, text, { mode: 0o644 });
  return file;
}

/** The one-line error loading this text gives (the test fails if it loads). */
function errorOf(text: string): { file: string; message: string } {
  const file = configFile(text);
  try {
    loadDaemonConfig(file);
  } catch (error) {
    assert.equal((error as Error).name, 'DaemonConfigError');
    return { file, message: (error as Error).message };
  }
  throw new Error(`loaded without an error: ${text}`);
}

test('a good file: its values, and the defaults for what it leaves out', () => {
  const file = configFile(
    JSON.stringify({
      adminGroup: 'gpu-admins',
      policy: {
        limits: [{ maxGpus: 2 }, { group: 'students', maxMemory: '40G', maxHighPriorityJobs: 1 }, { user: 'alice', defaultPriority: 'best-effort' }],
        fairShare: { halfLifeHours: 72 },
      },
      connections: { perUser: 16, unreadBytesPerUser: '16M' },
    }),
  );
  const said: string[] = [];
  const config = loadDaemonConfig(file, (line) => said.push(line));
  assert.deepEqual(config, {
    adminGroup: 'gpu-admins',
    rateHz: 1,
    metrics: null,
    boxName: null,
    policy: {
      limits: [{ maxGpus: 2 }, { group: 'students', maxMemory: 40 * 1024 ** 3, maxHighPriorityJobs: 1 }, { user: 'alice', defaultPriority: 'best-effort' }],
      fairShare: { enabled: true, halfLifeHours: 72 },
      idleHolders: { notifyAfterMinutes: 30, graceMinutes: 30, park: false },
    },
    connections: { perUser: 16, total: 1024, unreadBytesPerUser: 16 * 1024 ** 2, unreadBytesTotal: 512 * 1024 ** 2 },
    maxQueuedJobsPerUser: 100,
    slurm: { qosLanes: [], partitionLanes: [] },
  });
  assert.deepEqual(said, [], 'a file that is there needs no remark');
});

test('a missing file: the defaults, and the daemon says which file it did not find', () => {
  const file = join(dir, 'absent', 'config.json');
  const said: string[] = [];
  assert.deepEqual(
    loadDaemonConfig(file, (line) => said.push(line)),
    parseDaemonConfig({}),
  );
  assert.equal(said.length, 1);
  assert.match(said[0], new RegExp(`^${file} does not exist: using the defaults \\(administrators: root and group gpushare-admin;`));
});

test('a directory where the file should be is an error, not the defaults', () => {
  const path = join(dir, 'a-directory.json');
  mkdirSync(path);
  assert.throws(() => loadDaemonConfig(path), { message: `${path}: is a directory, not a config file` });
});

test('bad JSON: the file, line and column, and what is wrong there', () => {
  const cases: Array<[string, string]> = [
    ['{\n  "rateHz": 1\n  "adminGroup": "x"\n}', ':3:3: not valid JSON: expected "," or "}" after the value of "rateHz", found "adminGroup"'],
    ['{\n  "policy": {\n    "limits": [],\n  }\n}', ':4:3: not valid JSON: a comma before "}" (JSON allows no trailing comma)'],
    ['{\n  // admins\n  "adminGroup": "x"\n}', ':2:3: not valid JSON: expected a key in double quotes, found a comment (JSON has none: the README documents each key)'],
    ['{"adminGroup": "gpu\nadmins"}', ':1:20: not valid JSON: a string must end on the line it starts ("\\n" writes a line break)'],
    ['{"rateHz": tru}', ':1:12: not valid JSON: expected a value (an object, list, string, number, true, false or null), found "tru"'],
    ['{"rateHz": 1} {}', ':1:15: not valid JSON: expected nothing after the top-level value, found "{"'],
    ['{"policy": {"limits": [1, 2', ':1:28: not valid JSON: expected "," or "]" after a list item, found the end of the file'],
    ['  \n', ':2:1: not valid JSON: the file is empty (an empty configuration is {})'],
    ['{"rateHz": 1, "adminGroup": "a", "rateHz": 2}', ':1:34: not valid JSON: the key "rateHz" appears twice in this object (only one would count)'],
  ];
  for (const [text, expected] of cases) {
    const { file, message } = errorOf(text);
    assert.equal(message, file + expected, JSON.stringify(text));
  }
});

test('schema errors name the file and the key, one kind each', () => {
  const cases: Array<[unknown, string]> = [
    [{ policy: { limits: [{}, {}, { maxGpus: 99 }] } }, 'policy.limits[2].maxGpus: must be at most 64, got 99'],
    [{ adminGrup: 'x' }, 'adminGrup: is not a known field (known: adminGroup, rateHz, metrics, boxName, policy, autoParkIdleSeconds, connections, maxQueuedJobsPerUser, slurm)'],
    [{ rateHz: '1' }, 'rateHz: must be a number, got "1"'],
    [{ rateHz: 50 }, 'rateHz: must be at most 10 Hz, got 50'],
    [{ adminGroup: 'gpu admins' }, 'adminGroup: must be a user or group name, got "gpu admins"'],
    [{ policy: { limits: [{ maxGpus: 1.5 }] } }, 'policy.limits[0].maxGpus: must be a whole number, got 1.5'],
    [{ policy: { limits: [{ maxMemory: '40 gigs' }] } }, 'policy.limits[0].maxMemory: "40 gigs" is not a memory size: use a positive number with K, M, G or T (powers of 1024), like 512M, 20G or 1.5G.'],
    [{ policy: { limits: [{ defaultPriority: 'urgent' }] } }, 'policy.limits[0].defaultPriority: must be one of "high", "normal", "best-effort"; got "urgent"'],
    [{ policy: { limits: { maxGpus: 1 } } }, 'policy.limits: must be a list, got {"maxGpus":1}'],
    [{ policy: { idleHolders: { park: 'yes' } } }, 'policy.idleHolders.park: must be true or false, got "yes"'],
    [{ policy: { fairShare: { halfLifeHours: 0 } } }, 'policy.fairShare.halfLifeHours: must be at least 0.1 hours, got 0'],
    [{ policy: { limits: [{ maxGpus: 1 }, { user: 'alice', group: 'students', maxGpus: 2 }] } }, 'policy.limits[1]: names both a user and a group: one entry is for one of them (or, naming neither, for everyone)'],
    [{ connections: { perUser: 0 } }, 'connections.perUser: must be at least 1, got 0'],
    [{ connections: { perUser: 2000 } }, 'connections.perUser: is 2000, more than connections.total (1024): one user could hold every connection'],
    [{ connections: { unreadBytesPerUser: '2G' } }, 'connections.unreadBytesPerUser: is 2147483648 bytes, more than connections.unreadBytesTotal (536870912)'],
    [{ connections: { unreadBytesTotal: 'lots' } }, 'connections.unreadBytesTotal: "lots" is not a memory size: use a positive number with K, M, G or T (powers of 1024), like 512M, 20G or 1.5G.'],
    [[{ adminGroup: 'x' }], 'the whole file must be an object, got [{"adminGroup":"x"}]'],
  ];
  for (const [value, expected] of cases) {
    const { file, message } = errorOf(JSON.stringify(value));
    assert.equal(message, `${file}: ${expected}`);
  }
});

test('keys only Object.prototype knows (__proto__, constructor, toString) are unknown fields, at the top and nested', () => {
  for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    const top = errorOf(`{"rateHz": 1, "${key}": {"adminGroup": "everyone"}}`);
    assert.equal(top.message, `${top.file}: ${key}: is not a known field (known: adminGroup, rateHz, metrics, boxName, policy, autoParkIdleSeconds, connections, maxQueuedJobsPerUser, slurm)`);
    const nested = errorOf(`{"policy": {"limits": [{"user": "alice", "${key}": {"maxGpus": 64}}]}}`);
    assert.match(nested.message, new RegExp(`^${nested.file}: policy\\.limits\\[0\\]\\.${key}: is not a known field \\(known: user, group, maxGpus,`));
  }
});

test('object() refuses an own key named like an Object.prototype member, as JSON.parse makes them', () => {
  const limits = object({ maxGpus: optional(number()) });
  for (const key of ['__proto__', 'constructor', 'toString']) {
    const value = JSON.parse(`{"maxGpus": 2, "${key}": {"maxGpus": 99}}`) as object;
    assert.ok(Object.hasOwn(value, key));
    assert.throws(() => limits.parse(value, 'policy'), { name: 'ValidationError', message: `policy.${key}: is not a known field (known: maxGpus)` });
  }
  assert.deepEqual(limits.parse({ maxGpus: 2 }), { maxGpus: 2 });
});

test('the strict JSON reader gives what JSON.parse gives for valid text', () => {
  const texts = [
    '{}',
    '[]',
    '{"a": [1, -2.5, 3e2, 0, -0, 1E-3], "b": {"c": null, "d": true, "e": false}}',
    '"\\u00e9\\n\\t\\\\ \\"q\\" \\/"',
    '\t\r\n {"nested": [[[{"x": ""}]]]} \n',
    '{"__proto__": {"x": 1}}',
  ];
  for (const text of texts) assert.deepEqual(parseJsonStrict(text), JSON.parse(text), text);
  assert.ok(Object.hasOwn(parseJsonStrict('{"__proto__": 1}') as object, '__proto__'), '__proto__ stays an own key, as with JSON.parse');
  assert.deepEqual(parseJsonStrict('\ufeff{"a": 1}'), { a: 1 }, 'a byte-order mark is skipped');
});

test('the default file loads back to the defaults, every key written out', () => {
  const text = defaultConfigText();
  assert.deepEqual(loadDaemonConfig(configFile(text)), parseDaemonConfig({}));
  assert.deepEqual(Object.keys(JSON.parse(text)), ['adminGroup', 'rateHz', 'metrics', 'boxName', 'policy', 'connections', 'maxQueuedJobsPerUser', 'slurm']);
  assert.deepEqual(JSON.parse(text).connections, { perUser: 64, total: 1024, unreadBytesPerUser: '64M', unreadBytesTotal: '512M' }, 'sizes as an admin writes them');
  assert.deepEqual(Object.keys(JSON.parse(text).policy), ['limits', 'fairShare', 'idleHolders']);
});

test("each user's queued jobs are capped: 100 by default, maxQueuedJobsPerUser sets it, a whole number from 1", () => {
  assert.equal(parseDaemonConfig({}).maxQueuedJobsPerUser, 100);
  assert.equal(loadDaemonConfig(configFile('{"maxQueuedJobsPerUser": 500}')).maxQueuedJobsPerUser, 500);
  assert.throws(() => loadDaemonConfig(configFile('{"maxQueuedJobsPerUser": 0}')), /maxQueuedJobsPerUser: must be at least 1/);
});

test('writeDaemonConfig replaces the file whole (mode 0644 whatever the umask), sizes as an admin writes them, no temp file left', () => {
  const file = configFile('{"adminGroup": "old"}');
  const before = statSync(file).ino;
  const config = { ...parseDaemonConfig({}), policy: parseDaemonConfig({ policy: { limits: [{ group: 'students', maxMemory: '40G' }, { user: 'bob', maxMemory: 1000 }] } }).policy };
  const umask = process.umask(0o077);
  try {
    assert.deepEqual(writeDaemonConfig(file, config), config);
  } finally {
    process.umask(umask);
  }
  const stats = statSync(file);
  assert.equal(stats.mode & 0o777, 0o644);
  assert.notEqual(stats.ino, before, 'a new file renamed over the old one, not the old one rewritten in place');
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).policy.limits, [{ group: 'students', maxMemory: '40G' }, { user: 'bob', maxMemory: 1000 }]);
  assert.deepEqual(loadDaemonConfig(file), config);
  assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith('.')), []);
});

test('writeDaemonConfig refuses a config the daemon could not load, and leaves the file as it was', () => {
  const text = '{"adminGroup": "old"}\n';
  const file = configFile(text);
  const bad = { ...parseDaemonConfig({}), policy: { ...parseDaemonConfig({}).policy, limits: [{ user: 'alice', group: 'students' }] } };
  assert.throws(() => writeDaemonConfig(file, bad), { message: `${file}: not written: policy.limits[0]: names both a user and a group: one entry is for one of them (or, naming neither, for everyone)` });
  assert.equal(readFileSync(file, 'utf8'), text);
  assert.throws(() => writeDaemonConfig(join(dir, 'no-such-dir', 'config.json'), parseDaemonConfig({})), /no-such-dir\/config\.json: could not be written \(ENOENT/);
});

test('as root, a config that someone other than root could change is refused (it names the administrators)', (t) => {
  if (!isRoot) return t.skip('needs root: the check applies only to a root daemon, and only root can chown the test file');
  const owned = configFile('{}');
  chownSync(owned, 65534, 65534);
  assert.throws(() => loadDaemonConfig(owned), { message: `${owned}: refused: it is owned by uid 65534, not root, who could make themselves a gpushare administrator (chown root ${owned})` });

  const writable = configFile('{}');
  chmodSync(writable, 0o666);
  assert.throws(() => loadDaemonConfig(writable), { message: `${writable}: refused: it can be written by users other than root, who could make themselves gpushare administrators (chmod go-w ${writable})` });

  const open = mkdtempSync(join(dir, 'open-'));
  chmodSync(open, 0o777);
  writeFileSync(join(open, 'config.json'), '{}', { mode: 0o644 });
  assert.throws(() => loadDaemonConfig(join(open, 'config.json')), { message: `${join(open, 'config.json')}: refused: its directory ${open} can be written by users other than root, who could make themselves gpushare administrators (chmod go-w ${open})` });

  chmodSync(open, 0o1777); // sticky, like /tmp: others cannot replace root's file
  assert.deepEqual(loadDaemonConfig(join(open, 'config.json')), parseDaemonConfig({}));
});

test('the README\'s example config loads, and its limits come out as the README says', () => {
  const readme = readFileSync(join(packageRoot(), 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## For a lab admin: install the daemon'));
  const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(example, 'the lab admin section has a JSON example');
  const config = loadDaemonConfig(configFile(example));
  assert.equal(resolveLimits(config.policy, 'alice', ['students']).maxGpus?.value, 8, 'her own entry');
  assert.equal(resolveLimits(config.policy, 'carol', ['students']).maxGpus?.value, 2, 'her group\'s');
  assert.equal(resolveLimits(config.policy, 'dave', ['staff']).maxGpus?.value, 4, 'everyone\'s');
  assert.equal(resolveLimits(config.policy, 'carol', ['students']).maxMemory?.value, 80 * 1024 ** 3);
});
