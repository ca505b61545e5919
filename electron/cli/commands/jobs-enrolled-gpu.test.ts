// `gpushare jobs` shows an enrolled job's GPU as the driver places it: "0?" while only a hint, "0+3" where it also runs on GPU 3.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newJobView } from '../../engine/scheduler/job-table.js';
import { renderJobs } from './jobs.js';

test("an enrolled job's GPU column marks a hint with ? and names the other GPUs the driver lists it on", () => {
  const job = newJobView({ id: 'j1', managed: true, owner: 'alice', uid: 1000, argv: ['python'], gpu: 1, requestedGpu: 1, enrolled: { by: 'tree', group: 'g', name: null, pgid: 1, sid: 1, gpuFrom: 'environment' } }, 'running', 'enrolled');
  assert.match(renderJobs([job]), /j1\s+running\s+normal\s+1\?\s/);
  job.enrolled = { ...job.enrolled!, gpuFrom: 'driver', alsoOn: [{ gpu: 3, migSlice: null, usedMemory: 1 }] };
  assert.match(renderJobs([job]), /j1\s+running\s+normal\s+1\+3\s/);
  job.enrolled = { ...job.enrolled, alsoOn: undefined };
  assert.match(renderJobs([job]), /j1\s+running\s+normal\s+1\s/);
});
