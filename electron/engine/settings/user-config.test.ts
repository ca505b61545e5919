// The person's config file: checked with an error naming the key, the console's choices kept
// across restarts through settings.get / settings.set without touching the engine defaults beside them.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Dispatcher, type Caller } from '../api/dispatcher.js';
import { ownerConfigFile, perUserFiles, registerSettingsCommands } from './settings-commands.js';
import { loadUserConfig, saveConsolePreferences, userConfigPath, UserConfigError } from './user-config.js';

const home = mkdtempSync(join(tmpdir(), 'gpushare-settings-'));
after(() => rmSync(home, { recursive: true, force: true }));
let n = 0;
const fileWith = (text: string | null): string => {
  const dir = join(home, `c${++n}`, 'gpushare');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'config.json');
  if (text !== null) writeFileSync(file, text);
  return file;
};
const OWNER: Caller = { uid: 64_201, gid: 64_201, groups: [], user: 'ada', pid: null, admin: false, via: 'socket' };
const OTHER: Caller = { ...OWNER, uid: 64_202, user: 'bob' };

test('the file is $XDG_CONFIG_HOME/gpushare/config.json, else ~/.config/gpushare/config.json', () => {
  assert.equal(userConfigPath({ XDG_CONFIG_HOME: '/x/conf', HOME: '/home/ada' }), '/x/conf/gpushare/config.json');
  assert.equal(userConfigPath({ HOME: '/home/ada' }), '/home/ada/.config/gpushare/config.json');
});

test('a missing file is no settings; a valid one is read whole', () => {
  assert.deepEqual(loadUserConfig(fileWith(null)), {});
  const file = fileWith('{"engine": {"rateHz": 2, "defaultPriority": "best-effort", "db": "/srv/usage.db"}, "console": {"timelineMinutes": 60}}');
  assert.deepEqual(loadUserConfig(file), { engine: { rateHz: 2, defaultPriority: 'best-effort', db: '/srv/usage.db' }, console: { timelineMinutes: 60 } });
});

test('a bad file is an error naming the file and the key, or the line and column', () => {
  const cases: Array<[string, RegExp]> = [
    ['{"engine": {"rate": 2}}', /config\.json: engine\.rate: is not a known field \(known: rateHz, db, defaultPriority, metrics, boxName, autoParkIdleSeconds\)$/],
    ['{"engine": {"rateHz": 50}}', /config\.json: engine\.rateHz: must be at most 10/],
    ['{"engine": {"defaultPriority": "urgent"}}', /engine\.defaultPriority: must be one of/],
    ['{"engine": {"db": "usage.db"}}', /engine\.db: must be an absolute path, got "usage\.db"/],
    ['{"engine": {"metrics": "example.org:http"}}', /config\.json: .*engine\.metrics/],
    ['{"console": {"timelineMinutes": 0}}', /console\.timelineMinutes: must be at least 1/],
    ['{"console": {"window": {"width": 10, "height": 600}}}', /console\.window\.width: must be at least 320/],
    ['{"engine": {"rateHz": 2,}}', /config\.json:1:25: not valid JSON: a comma before "}"/],
    ['[]', /config\.json: the whole file must be an object/],
  ];
  for (const [text, message] of cases) {
    const file = fileWith(text);
    assert.throws(() => loadUserConfig(file), (e: unknown) => e instanceof UserConfigError && message.test(e.message), text);
  }
});

test('saving the console\'s choices merges them over the kept ones, keeps the engine settings, writes 0600 in a 0700 folder, and reads back', () => {
  const file = fileWith('{"engine": {"rateHz": 2}}');
  saveConsolePreferences({ timelineMinutes: 1, ownerFilter: 'mine', gpuFilter: 1, sortKey: 'sm', sortDescending: false, window: { width: 1280, height: 800 } }, file);
  assert.deepEqual(loadUserConfig(file), {
    engine: { rateHz: 2 },
    console: { timelineMinutes: 1, ownerFilter: 'mine', gpuFilter: 1, sortKey: 'sm', sortDescending: false, window: { width: 1280, height: 800 } },
  });
  assert.equal(statSync(file).mode & 0o777, 0o600);
  saveConsolePreferences({ gpuFilter: null }, file); // the console's filters only: the window size stays
  assert.deepEqual(loadUserConfig(file).console, { timelineMinutes: 1, ownerFilter: 'mine', gpuFilter: null, sortKey: 'sm', sortDescending: false, window: { width: 1280, height: 800 } });
  const fresh = join(home, 'fresh', 'gpushare', 'config.json');
  saveConsolePreferences({ timelineMinutes: 10 }, fresh);
  assert.equal(statSync(join(home, 'fresh', 'gpushare')).mode & 0o777, 0o700);
  assert.equal(statSync(fresh).mode & 0o777, 0o600);
});

test('a file that is not valid is not overwritten by the console (the engine settings in it would be lost)', () => {
  const text = '{"engine": {"rateHz": 2, "colour": "blue"}}';
  const file = fileWith(text);
  assert.throws(() => saveConsolePreferences({ timelineMinutes: 10 }, file), /engine\.colour: is not a known field/);
  assert.equal(readFileSync(file, 'utf8'), text);
});

test('settings.set then settings.get round-trip through the API for the engine\'s owner; others are told no; bad values name the key', async () => {
  const file = fileWith(null);
  const dispatcher = new Dispatcher();
  registerSettingsCommands(dispatcher, ownerConfigFile(OWNER.uid, file));
  assert.deepEqual(await dispatcher.dispatch('settings.get', {}, OWNER), {});
  const preferences = { timelineMinutes: 60, userFilter: 'bob', gpuFilter: null, sortKey: 'user', sortDescending: true };
  assert.deepEqual(await dispatcher.dispatch('settings.set', { preferences }, OWNER), preferences);
  assert.deepEqual(await dispatcher.dispatch('settings.get', {}, OWNER), preferences);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { console: preferences });
  await assert.rejects(dispatcher.dispatch('settings.get', {}, OTHER), /kept by each person's personal engine/);
  await assert.rejects(dispatcher.dispatch('settings.set', { preferences: { timelineMinutes: 10 } }, OTHER), /kept by each person's personal engine/);
  await assert.rejects(dispatcher.dispatch('settings.set', { preferences: { timelineMinutes: 999 } }, OWNER), /params\.preferences\.timelineMinutes: must be at most 60/);
  await assert.rejects(dispatcher.dispatch('settings.set', { preferences: { theme: 'dark' } }, OWNER), /params\.preferences\.theme: is not a known field/);
  assert.deepEqual(await dispatcher.dispatch('settings.get', {}, OWNER), preferences, 'nothing half-applied');
});

test('the box daemon keeps each user\'s choices in a file of their own, root\'s and 0600', async () => {
  const dir = join(home, 'daemon', 'preferences');
  const dispatcher = new Dispatcher();
  registerSettingsCommands(dispatcher, perUserFiles(dir));
  await dispatcher.dispatch('settings.set', { preferences: { timelineMinutes: 60 } }, OWNER);
  await dispatcher.dispatch('settings.set', { preferences: { ownerFilter: 'mine' } }, OTHER);
  assert.deepEqual(await dispatcher.dispatch('settings.get', {}, OWNER), { timelineMinutes: 60 });
  assert.deepEqual(await dispatcher.dispatch('settings.get', {}, OTHER), { ownerFilter: 'mine' });
  assert.equal(statSync(join(dir, `${OWNER.uid}.json`)).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
});
