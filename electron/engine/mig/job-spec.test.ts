// Job specs as people type them on the command line and in the console (shared/mig-job-spec.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseByteSize } from '../../../shared/byte-size.js';
import { JobSpecError, parseJobSpec, parseJobSpecs } from '../../../shared/mig-job-spec.js';

test('memory, SM share and priority are read from MEMORY[:SMSHARE][@PRIORITY]; 20G, 20GB and 20GiB are all 20 × 2^30 bytes', () => {
  const GiB = 2 ** 30;
  assert.deepEqual(parseJobSpecs('30G,10G:0.2, 20GiB:25%@high,512M@best-effort,1.5TB@normal,7GB'), [
    { id: 'job1', memoryBytes: 30 * GiB },
    { id: 'job2', memoryBytes: 10 * GiB, smShare: 0.2 },
    { id: 'job3', memoryBytes: 20 * GiB, smShare: 0.25, priority: 'high' },
    { id: 'job4', memoryBytes: 512 * 2 ** 20, priority: 'best-effort' },
    { id: 'job5', memoryBytes: 1.5 * 2 ** 40, priority: 'normal' },
    { id: 'job6', memoryBytes: 7 * GiB },
  ]);
});

test('a job spec reads its memory with the same parser as --mem and the lab policy', () => {
  for (const text of ['20G', '7.5GiB', '512M', '1T']) assert.equal(parseJobSpec(text, 0).memoryBytes, parseByteSize(text), text);
});

test('bad specs are errors that name the job and the problem', () => {
  const cases: [string, RegExp][] = [
    ['-5G', /Job 1 "-5G": memory must be more than 0, got -5G/],
    ['0G', /memory must be more than 0/],
    ['abc', /memory "abc" is not a number with a unit/],
    ['10Q', /unknown memory unit "Q"/],
    ['10G:1.5', /SM share must be more than 0 and at most 1 \(or 1-100%\), got 1\.5/],
    ['10G:0', /SM share must be more than 0/],
    ['10G:-0.1', /SM share must be more than 0/],
    ['10G:150%', /SM share must be 1-100%, got 150%/],
    ['10G:0.5%', /SM share must be 1-100%/],
    ['10G:half', /SM share "half" is not a number/],
    ['10G@urgent', /unknown priority "urgent"/],
    ['10G:0.1:0.2', /more than one ":SMSHARE"/],
    ['10G@high@low', /more than one "@PRIORITY"/],
    ['', /is empty/],
    ['7', /memory "7" needs a unit, like 7G \(GiB\)/],
  ];
  for (const [spec, message] of cases) assert.throws(() => parseJobSpec(spec, 0), (e: unknown) => e instanceof JobSpecError && message.test(e.message), spec);
  assert.throws(() => parseJobSpecs('10G,,5G'), /Job 2 "": is empty/);
  assert.throws(() => parseJobSpecs(''), /No jobs given/);
});
