// `gpushare mps status` text: each daemon of ours says who started it (jobs: it stops with the last one;
// a request: it runs until stopped, and how to stop it); off and held daemons say nothing of the kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MpsGpuStatus } from '../../../shared/spatial.js';
import { mpsStatusLines } from './mps.js';

const status = (gpu: number, state: MpsGpuStatus['state'], message: string, extra: Partial<MpsGpuStatus> = {}): MpsGpuStatus => ({ gpu, state, user: null, controlPid: null, serverPids: [], pipeDir: null, message, ...extra });

test('mps status says who started each daemon of ours, and nothing of the kind for an off or held one', () => {
  const lines = mpsStatusLines([
    status(0, 'ours', 'MPS runs for GPU 0 (simulated daemon).', { startedFor: 'jobs' }),
    status(1, 'ours', 'MPS runs for GPU 1 (simulated daemon).', {
      startedFor: 'request',
      slices: [{ ...status(1, 'ours', 'MPS runs for GPU 1 slice GI 2 (simulated daemon).', { startedFor: 'jobs' }), gpuInstanceId: 2, uuid: 'MIG-2', daemonRunning: true }],
    }),
    status(2, 'off', 'No MPS daemon serves GPU 2.'),
    status(3, 'held', 'MPS held by user alice (simulated daemon on GPU 3).', { heldBy: 'alice' }),
  ]);
  assert.deepEqual(lines, [
    'GPU 0  ours  MPS runs for GPU 0 (simulated daemon). Started for jobs: it stops when the last one ends.',
    'GPU 1  ours  MPS runs for GPU 1 (simulated daemon). Started on request: it runs until `gpushare mps stop --gpu 1`.',
    '  GI 2  ours  MPS runs for GPU 1 slice GI 2 (simulated daemon). Started for jobs: it stops when the last one ends.',
    'GPU 2  off   No MPS daemon serves GPU 2.',
    'GPU 3  held  MPS held by user alice (simulated daemon on GPU 3).',
  ]);
});
