// The header says which engine the console talks to and as whom, and who else schedules the box.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineLabel, otherEngineWarnings, PERSONAL_ENGINE_TEXT } from './engine-label.js';

const daemon = { kind: 'daemon' as const, owner: 'root', pid: 812 };
const personal = { kind: 'personal' as const, owner: 'alice', pid: 4242 };

test('the box daemon names who you are; a personal engine says what it cannot do', () => {
  assert.equal(engineLabel({ user: 'alice', engine: daemon }), 'box daemon · signed in as alice');
  assert.equal(engineLabel({ user: 'alice', engine: personal }), 'personal engine: only your own processes can be scheduled');
  assert.equal(PERSONAL_ENGINE_TEXT, engineLabel({ user: 'alice', engine: personal }));
  assert.equal(engineLabel({ user: 'alice' }), 'signed in as alice', 'an engine too old to say which it is');
});

test('another user\'s engine on the box: one sentence naming them, with what to do', () => {
  assert.deepEqual(otherEngineWarnings({ user: 'alice', engine: personal, otherEngines: [] }), []);
  assert.deepEqual(otherEngineWarnings({ user: 'alice', engine: personal }), [], 'an engine that does not look');
  assert.deepEqual(otherEngineWarnings({ user: 'alice', engine: personal, otherEngines: [{ user: 'bob', pid: 7, kind: 'serve' }] }), [
    "bob's gpushare engine also schedules this box; ask an admin to install the daemon",
  ]);
  assert.deepEqual(
    otherEngineWarnings({ user: 'alice', engine: personal, otherEngines: [{ user: 'bob', pid: 7, kind: 'serve' }, { user: 'carol', pid: 8, kind: 'app' }, { user: 'bob', pid: 9, kind: 'engine' }] }),
    ["bob's and carol's gpushare engines also schedule this box; ask an admin to install the daemon"],
  );
});

test('beside a daemon the advice is the daemon, not installing one', () => {
  assert.deepEqual(otherEngineWarnings({ user: 'alice', engine: personal, otherEngines: [{ user: 'root', pid: 1, kind: 'daemon' }] }), [
    'The box daemon also schedules this box; quit this personal engine (gpushare stop) and use the daemon.',
  ]);
  assert.deepEqual(otherEngineWarnings({ user: 'alice', engine: daemon, otherEngines: [{ user: 'bob', pid: 7, kind: 'start' }] }), [
    "bob's gpushare engine also schedules this box beside the daemon, without knowing of it",
  ]);
});
