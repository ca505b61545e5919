// `gpushare run --gpus N` and `--gpu 0,2` as typed: what is sent to the engine, and the sentence for each bad input.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkGpuCountOnBox, parseRunGpus } from './run-args.js';
import { UsageError } from './usage-error.js';

const refused = (fn: () => unknown, message: RegExp): void => assert.throws(fn, (error: unknown) => error instanceof UsageError && message.test(error.message));

test('--gpu N and auto are as before; --gpus N asks the scheduler for N; --gpu a,b names them in order', () => {
  assert.deepEqual(parseRunGpus({}), { gpu: 'auto' });
  assert.deepEqual(parseRunGpus({ gpu: '1' }), { gpu: 1 });
  assert.deepEqual(parseRunGpus({ gpus: '1' }), { gpu: 'auto' });
  assert.deepEqual(parseRunGpus({ gpus: '2' }), { gpu: 'auto', gpuCount: 2 });
  assert.deepEqual(parseRunGpus({ gpu: '2,0' }), { gpu: [2, 0] });
  assert.deepEqual(parseRunGpus({ gpu: '0,2', gpus: '2' }), { gpu: [0, 2] }, 'a count that agrees with the list is no conflict');
});

test('bad GPU lists and counts get a sentence naming the problem', () => {
  refused(() => parseRunGpus({ gpus: '0' }), /--gpus 0: a job runs on at least 1 GPU/);
  refused(() => parseRunGpus({ gpus: 'two' }), /--gpus must be a whole number of GPUs/);
  refused(() => parseRunGpus({ gpus: '17' }), /at most 16 GPUs/);
  refused(() => parseRunGpus({ gpu: '0,0' }), /--gpu 0,0 names GPU 0 twice/);
  refused(() => parseRunGpus({ gpu: '0,,1' }), /--gpu must be a GPU index, a list of them \(0,2\) or "auto"/);
  refused(() => parseRunGpus({ gpu: 'auto,1' }), /--gpu must be a GPU index/);
  refused(() => parseRunGpus({ gpu: '0,1', gpus: '3' }), /--gpu 0,1 names 2 GPUs and --gpus says 3/);
  refused(() => parseRunGpus({ gpu: '1', gpus: '2' }), /--gpu 1 names 1 GPU and --gpus says 2/);
  refused(() => parseRunGpus({ gpus: '2', migSlice: 'MIG-x' }), /--mig-slice runs a job in one MIG slice of one GPU: not with --gpus 2/);
  refused(() => parseRunGpus({ gpu: '0,1', mode: 'mps' }), /--mode mps shares one GPU through MPS: not with --gpu 0,1/);
  refused(() => parseRunGpus({ gpu: '0,1', mpsShare: '50' }), /--mps-share shares one GPU through MPS: not with --gpu 0,1/);
});

test('more GPUs than the box has: "there are only N GPUs"; an index past the last names the box', () => {
  refused(() => checkGpuCountOnBox(2, { gpu: 'auto', gpuCount: 9 }), /--gpus 9: there are only 2 GPUs on this box/);
  refused(() => checkGpuCountOnBox(1, { gpu: 'auto', gpuCount: 2 }), /--gpus 2: there is only 1 GPU on this box/);
  refused(() => checkGpuCountOnBox(2, { gpu: [0, 2] }), /--gpu 0,2: there is no GPU 2; this box has 2 GPUs, indexes 0-1/);
  checkGpuCountOnBox(3, { gpu: [0, 2] });
  checkGpuCountOnBox(2, { gpu: 'auto', gpuCount: 2 });
  checkGpuCountOnBox(2, { gpu: 1 });
});
