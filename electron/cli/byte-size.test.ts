// One size convention: the CLI's --mem, the MIG job specs (CLI and the console's Plan MIG view, see
// electron/engine/mig/job-spec.test.ts) and the lab policy read "20G" as the same 20 GiB
// (shared/byte-size.ts; tested here: the renderer's type check takes in every file under shared/).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatByteSize, parseByteSize } from '../../shared/byte-size.js';

const GiB = 2 ** 30;

test('20G, 20GB and 20GiB are 20 × 2^30 bytes; K, M, T are powers of 1024 too', () => {
  for (const text of ['20G', '20GB', '20GiB', '20 g', '20480M']) assert.equal(parseByteSize(text), 20 * GiB, text);
  assert.equal(parseByteSize('1.5T'), 1.5 * 2 ** 40);
  assert.equal(parseByteSize('512K'), 512 * 1024);
  assert.equal(formatByteSize(20 * GiB), '20G');
});

test('a negative or zero size is an error that names it and says sizes are positive', () => {
  assert.throws(() => parseByteSize('-1G'), /^RangeError: "-1G" is not a memory size: it must be positive, like 20G \(GiB\)/);
  assert.throws(() => parseByteSize('0'), /"0" is not a memory size: use a positive number/);
  assert.throws(() => parseByteSize('lots'), /"lots" is not a memory size/);
});
