import assert from 'node:assert/strict';
import { test } from 'node:test';
import { until, untilWith } from './until.js';

test('until returns the first value a step gives, looking again while it gives undefined, null or false', async () => {
  const answers = [undefined, null, false, 0, 7];
  let looks = 0;
  assert.equal(await until('a number', () => answers[looks++], { intervalMs: 1 }), 0, '0 is a value: only undefined, null and false mean not yet');
  assert.equal(looks, 4);
  assert.equal(await until('an async value', async () => 'here'), 'here');
});

test('until gives up after its tries, naming what it waited for and what the test adds', async () => {
  let looks = 0;
  await assert.rejects(
    until('the moon', () => (looks++, false), { tries: 3, intervalMs: 0, detail: () => 'the sky was cloudy' }),
    (e: Error) => /^gave up waiting for the moon \(3 looks in \d+ ms\)\nthe sky was cloudy$/.test(e.message),
  );
  assert.equal(looks, 3, 'exactly its tries');
});

test('until gives up once its time is past, and takes that last look', async () => {
  const start = Date.now();
  let looks = 0;
  await assert.rejects(until('nothing', () => (looks++, undefined), { timeoutMs: 100, intervalMs: 20 }), /gave up waiting for nothing/);
  assert.ok(Date.now() - start >= 100, 'not before its time');
  assert.ok(looks >= 2, `looked again while waiting (${looks} looks)`);
});

test('a step that throws ends the wait with its own error', async () => {
  await assert.rejects(until('a job', () => { throw new Error('the job exited'); }), /^Error: the job exited$/);
});

test('untilWith sets a file\'s defaults; a call may still override them', async () => {
  const fileWait = untilWith({ tries: 2, intervalMs: 0, detail: () => 'file detail' });
  await assert.rejects(fileWait('x', () => false), /\(2 looks in \d+ ms\)\nfile detail$/);
  await assert.rejects(fileWait('x', () => false, { tries: 1 }), /\(1 looks in/);
});
