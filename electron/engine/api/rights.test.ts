// Who may call each method is declared once, in the API registry (shared/api.ts `who`), and the
// dispatcher checks it before any handler runs: a refused caller never reaches the handler.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { API_METHODS, type ApiMethod } from '../../../shared/api.js';
import { Dispatcher, type Caller } from './dispatcher.js';
import { validParams } from './testing/valid-params.js';

const ENGINE_USER = { uid: 5000, user: 'ada' };
const alice: Caller = { uid: 5001, gid: 5001, groups: [], user: 'alice', pid: null, admin: false, via: 'socket' };
const mallory: Caller = { uid: 5002, gid: 5002, groups: [], user: 'mallory', pid: null, admin: false, via: 'socket' };
const dana: Caller = { uid: 5003, gid: 5003, groups: [], user: 'dana', pid: null, admin: true, via: 'socket' };
const ada: Caller = { ...mallory, uid: ENGINE_USER.uid, user: ENGINE_USER.user };
const METHODS = Object.keys(API_METHODS) as ApiMethod[];

/** A dispatcher whose every method has a handler that only records that it ran; every job is alice's. */
function dispatcher() {
  const d = new Dispatcher(ENGINE_USER.uid);
  d.useRights({ engineUid: ENGINE_USER.uid, engineUser: ENGINE_USER.user, adminGroup: 'gpushare-admin' });
  d.useJobOwners(() => ({ user: alice.user, uid: alice.uid }));
  const ran: string[] = [];
  for (const method of METHODS) d.register(method, (() => ran.push(method)) as never);
  const outcome = (method: ApiMethod, caller: Caller, params: object = validParams(method)) =>
    d.dispatch(method, params, caller).then(
      () => 'ran',
      (error: Error & { code?: string }) => `${error.code}: ${error.message}`,
    );
  return { ran, outcome };
}

test('each method refuses exactly the callers its `who` leaves out, before its handler runs', async () => {
  const expected: Record<string, Record<string, boolean>> = {};
  const got: Record<string, Record<string, boolean>> = {};
  for (const method of METHODS) {
    const { kind } = API_METHODS[method].who;
    // the engine's own user administers the box it runs, but acts on another user's job only as an administrator
    const allowed = { mallory: kind === 'anyone', alice: kind === 'anyone' || kind === 'job-owner', dana: kind !== 'engine-user', ada: kind !== 'job-owner' };
    expected[method] = allowed;
    got[method] = {};
    for (const [name, caller] of Object.entries({ mallory, alice, dana, ada })) {
      const { ran, outcome } = dispatcher();
      const answer = await outcome(method, caller);
      assert.ok(answer === 'ran' || answer.startsWith('forbidden: '), `${method} as ${name}: ${answer}`);
      assert.equal(ran.length, answer === 'ran' ? 1 : 0, `${method} as ${name}: the handler ran only when allowed`);
      got[method][name] = answer === 'ran';
    }
  }
  assert.deepEqual(got, expected);
});

test('a refusal names the rule and the owner; a dry run of a MIG layout is open to everyone', async () => {
  const { outcome } = dispatcher();
  assert.equal(await outcome('jobs.move', mallory, { job: 'j7', priority: 'high' }), "forbidden: Cannot move j7: it belongs to alice (uid 5001). mallory may act only on their own jobs and processes; an administrator (root or a member of group gpushare-admin) may act on anyone's.");
  assert.equal(await outcome('sampler.setRate', alice, { hz: 2 }), 'forbidden: Cannot change the sampling rate: every user of the box sees the GPUs at that rate. Only an administrator (root or a member of group gpushare-admin) may; alice (uid 5001) is not.');
  assert.equal(await outcome('engine.stop', dana), "forbidden: Only a personal engine's own user may stop it: this one is ada's (uid 5000); dana (uid 5003) is not.");
  assert.equal(await outcome('mig.apply', mallory, { gpu: 0, layout: ['7g.80gb'], dryRun: true }), 'ran');
  assert.match(await outcome('mig.apply', mallory, { gpu: 0, layout: ['7g.80gb'] }), /^forbidden: Cannot change the MIG layout of GPU 0: /);
});
