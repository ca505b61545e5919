// Where an enrolled job runs, from where the driver lists its processes: most memory first, no flapping between equals.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newJobView } from './job-table.js';
import { addPlace, applyPlacement, decidePlacement, PLACEMENT_MOVE_SAMPLES } from './enrolled-placement.js';
import { enrolledGpuNote, enrolledGpuText, type EnrolledPlace } from '../../../shared/jobs.js';

const enrolledJob = (gpu: number) =>
  newJobView({ id: 'j1', managed: true, owner: 'alice', uid: 1000, argv: ['python'], gpu, requestedGpu: gpu, enrolled: { by: 'tree', group: 'tree:1000:1:1', name: null, pgid: 1, sid: 1, gpuFrom: 'environment' } }, 'running', 'enrolled');

test('a job on two GPUs is placed where its processes hold most memory, the other shown beside it', () => {
  const places: EnrolledPlace[] = [];
  addPlace(places, { gpu: 0, migSlice: null, usedMemory: 100 });
  addPlace(places, { gpu: 1, migSlice: null, usedMemory: 300 });
  addPlace(places, { gpu: 0, migSlice: null, usedMemory: 250 }); // a second process on GPU 0: 350 there in all
  const job = enrolledJob(1);
  const decided = decidePlacement(places, job)!;
  assert.deepEqual(decided.place, { gpu: 0, migSlice: null, usedMemory: 350 });
  const { changed, moved } = applyPlacement(job, decided);
  assert.ok(changed);
  assert.match(moved!, /on GPU 0 \(its CUDA_VISIBLE_DEVICES named GPU 1\)/);
  assert.deepEqual([job.gpu, job.requestedGpu, job.enrolled!.gpuFrom, job.enrolled!.alsoOn], [0, 0, 'driver', [{ gpu: 1, migSlice: null, usedMemory: 300 }]]);
  assert.deepEqual(job.gpus, [0, 1], 'its GPUs: where it holds most first, then the others: it is gated on each');
  assert.match(moved!, /gated on GPUs 0,1/);
});

test('a job the driver shows on a second GPU is gated there too (a move of its slot), and back on one when it leaves it', () => {
  const job = enrolledJob(0);
  applyPlacement(job, decidePlacement([{ gpu: 0, migSlice: null, usedMemory: 64 }], job)!);
  const second = applyPlacement(job, decidePlacement([{ gpu: 0, migSlice: null, usedMemory: 64 }, { gpu: 2, migSlice: null, usedMemory: 32 }], job)!);
  assert.deepEqual([job.gpu, job.gpus], [0, [0, 2]]);
  assert.deepEqual(second, { changed: true, moved: 'the driver lists its processes on GPU 2 too: gated on GPUs 0,2' });
  const alone = () => applyPlacement(job, decidePlacement([{ gpu: 0, migSlice: null, usedMemory: 64 }], job)!);
  for (let i = 1; i < PLACEMENT_MOVE_SAMPLES; i++) assert.deepEqual([job.gpus, alone().moved], [[0, 2], null], 'still gated on GPU 2: a flickering list does not take it out');
  assert.deepEqual([alone(), job.gpus], [{ changed: true, moved: 'the driver lists its processes on GPU 0 alone now: gated there alone' }, [0]], 'out after PLACEMENT_MOVE_SAMPLES samples in a row without it');
  const slice = enrolledJob(1);
  applyPlacement(slice, decidePlacement([{ gpu: 1, migSlice: 'MIG-a', usedMemory: 64 }, { gpu: 0, migSlice: null, usedMemory: 8 }], slice)!);
  assert.deepEqual(slice.gpus, [1], 'a job in a MIG slice is gated in its slice only (a slot in a slice is on one GPU)');
});

test('between equal places the job stays where it is; listed nowhere, its place stands', () => {
  const job = enrolledJob(1);
  const equal = [{ gpu: 0, migSlice: null, usedMemory: 64 }, { gpu: 1, migSlice: null, usedMemory: 64 }];
  assert.equal(decidePlacement(equal, job)!.place.gpu, 1);
  assert.equal(decidePlacement(equal, enrolledJob(3))!.place.gpu, 0, 'else the lowest GPU');
  assert.equal(decidePlacement([], job), null);
  const { changed, moved } = applyPlacement(job, decidePlacement(equal, job)!);
  assert.deepEqual([changed, moved], [true, 'the driver lists its processes on GPU 0 too: gated on GPUs 1,0'], 'confirmed by the driver on GPU 1, and on GPU 0 too: gated there as well (it was: no move)');
  assert.deepEqual(applyPlacement(job, decidePlacement(equal, job)!), { changed: false, moved: null }, 'nothing new: no change to keep');
  assert.deepEqual(applyPlacement(job, decidePlacement([{ ...equal[0], usedMemory: 1 }, { ...equal[1], usedMemory: 99 }], job)!), { changed: false, moved: null }, 'memory alone: shown, not kept');
  assert.equal(job.enrolled!.alsoOn![0].usedMemory, 1);
});

test('a MIG slice is a place of its own, apart from its GPU', () => {
  const job = enrolledJob(1);
  const decided = decidePlacement([{ gpu: 1, migSlice: 'MIG-a', usedMemory: 10 }, { gpu: 1, migSlice: null, usedMemory: 5 }], job)!;
  applyPlacement(job, decided);
  assert.deepEqual([job.gpu, job.migSlice, job.enrolled!.alsoOn], [1, 'MIG-a', [{ gpu: 1, migSlice: null, usedMemory: 5 }]]);
});

test('the GPU column and the board say when a GPU is only a hint, and where else the job runs', () => {
  const job = enrolledJob(1);
  assert.equal(enrolledGpuText(job), '1?');
  assert.match(enrolledGpuNote(job)!, /GPU 1 as its CUDA_VISIBLE_DEVICES says: not yet confirmed by the driver/);
  applyPlacement(job, decidePlacement([{ gpu: 0, migSlice: null, usedMemory: 2 * 1024 ** 3 }, { gpu: 3, migSlice: null, usedMemory: 1024 ** 3 }], job)!);
  assert.equal(enrolledGpuText(job), '0+3');
  assert.equal(enrolledGpuNote(job), 'shown on GPU 0, where it holds most memory; also on GPU 3 (1G)');
});

test('a job whose process list flickers between two GPUs tick by tick keeps its place; a place seen in a row for PLACEMENT_MOVE_SAMPLES samples moves it', () => {
  const job = enrolledJob(1);
  const on = (gpu: number): EnrolledPlace[] => [{ gpu, migSlice: null, usedMemory: 64 }];
  const sample = (places: EnrolledPlace[]) => applyPlacement(job, decidePlacement(places, job)!);
  assert.match(sample(on(0)).moved!, /on GPU 0 \(its CUDA_VISIBLE_DEVICES named GPU 1\)/, 'the driver\'s first word is taken at once');
  const moves: Array<string | null> = [];
  for (let tick = 0; tick < 8; tick++) moves.push(sample(on(tick % 2 === 0 ? 1 : 0)).moved);
  assert.deepEqual(moves, ['the driver lists its processes on GPU 1 too: gated on GPUs 0,1', ...Array(7).fill(null)], 'alternating lists never move its place; its slot counts on GPU 1 too from the first, and stays');
  assert.equal(job.gpu, 0);
  assert.deepEqual(job.enrolled!.alsoOn, undefined, 'listed where it is: nothing beside it');
  sample(on(1));
  assert.deepEqual(job.enrolled!.alsoOn, [{ gpu: 1, migSlice: null, usedMemory: 64 }], 'held where it is, the other place shown beside it');
  const split = [{ gpu: 0, migSlice: null, usedMemory: 60 }, { gpu: 1, migSlice: null, usedMemory: 70 }];
  sample(on(0)); // listed where it is again: the count starts over
  const seen: Array<string | null> = [];
  for (let i = 1; i < PLACEMENT_MOVE_SAMPLES; i++) seen.push(sample(split).moved);
  assert.deepEqual(seen, Array(PLACEMENT_MOVE_SAMPLES - 1).fill(null), 'not yet');
  assert.equal(job.gpu, 0);
  assert.match(sample(split).moved!, /on GPU 1 \(the driver showed it on GPU 0\)/, 'the Kth sample in a row moves it');
  assert.deepEqual([job.gpu, job.enrolled!.alsoOn], [1, [{ gpu: 0, migSlice: null, usedMemory: 60 }]]);
});
