// What a Slurm job's usage row says of it: its account as the prolog may send it (bounded like the QOS), and its GPUs as a lab admin reads them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slurmGpusText, slurmPrologSchema } from './slurm.js';

test("the prolog's account is a Slurm name of at most 64 characters: a longer one, or one holding a newline, is refused naming the field", () => {
  const job = { jobId: '7', uid: 1000, gpus: [0] };
  assert.equal(slurmPrologSchema.parse({ ...job, account: 'vision-lab' }, 'params').account, 'vision-lab');
  assert.equal(slurmPrologSchema.parse({ ...job, account: null }, 'params').account, null);
  assert.throws(() => slurmPrologSchema.parse({ ...job, account: 'a'.repeat(65) }, 'params'), /params\.account/);
  assert.throws(() => slurmPrologSchema.parse({ ...job, account: 'lab\nQOS=top' }, 'params'), /params\.account: must be a Slurm account name/);
});

test('GPUs by index, whole GPUs as "GPU n", slices by their profile, two of one profile counted, a slice of unknown profile said so', () => {
  assert.equal(slurmGpusText([]), '');
  assert.equal(slurmGpusText([{ gpu: 1, gpuInstanceId: null, profile: null }, { gpu: 0, gpuInstanceId: null, profile: null }]), 'GPU 0, GPU 1');
  assert.equal(
    slurmGpusText([
      { gpu: 1, gpuInstanceId: 3, profile: '1g.10gb' },
      { gpu: 1, gpuInstanceId: 1, profile: '3g.40gb' },
      { gpu: 1, gpuInstanceId: 4, profile: '1g.10gb' },
      { gpu: 0, gpuInstanceId: null, profile: null },
      { gpu: 2, gpuInstanceId: 5, profile: null },
    ]),
    'GPU 0, GPU 1 · 2× 1g.10gb, GPU 1 · 3g.40gb, GPU 2 · MIG slice',
  );
});
