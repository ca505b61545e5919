// `gpushare jobs` marks a Slurm job's gpushare job with its Slurm id, partition and QOS.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { enrolledMark } from './jobs.js';

const enrolled = (slurm: NonNullable<JobView['enrolled']>['slurm']): JobView => ({ enrolled: { by: 'slurm', group: 'slurm:1000:1234', name: 'slurm job 1234', pgid: 1, sid: 1, ...(slurm ? { slurm } : {}) } }) as JobView;

test("a Slurm job's mark names its Slurm id, partition and QOS; one the prolog did not register says only that it is a Slurm job", () => {
  assert.equal(enrolledMark(enrolled({ jobId: '1234', partition: 'gpu', qos: 'high' })), '[slurm job 1234 · partition gpu · QOS high] ');
  assert.equal(enrolledMark(enrolled({ jobId: '1234', partition: 'gpu', qos: null })), '[slurm job 1234 · partition gpu] ');
  assert.equal(enrolledMark(enrolled(undefined)), '[enrolled: slurm job 1234] ');
});
