// A GPU tile's figures in words, and where each row sits on its canvas: what the worker draws and what
// the pointer's title names are the same rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LabConsoleGpu } from '../../../../shared/lab-console.js';
import { FIGURES, figuresHeight, meterBar, rowAt, rowTops, sameFigures, tileFigures, userLineCount } from './tile-figures.js';

const GIB = 1024 ** 3;
const gpu = (over: Partial<LabConsoleGpu> = {}): LabConsoleGpu =>
  ({ index: 0, name: 'NVIDIA H100 80GB HBM3', lost: false, utilization: 42.4, memoryUsed: 20 * GIB, memoryTotal: 80 * GIB, migSlices: 0, queued: 0, users: [], otherUsers: 0, ...over }) as LabConsoleGpu;

test('the meters: utilization and memory in words and as shares of their bars', () => {
  const f = tileFigures(gpu());
  assert.deepEqual(f.util, { label: 'util', share: 42.4, value: '42%', title: 'utilization 42%' });
  assert.deepEqual(f.mem, { label: 'mem', share: 25, value: '20.0 GiB / 80.0 GiB', title: 'memory 20.0 GiB of 80.0 GiB' });
});

test('a GPU with no figures yet shows dashes and empty bars, and a share never leaves 0 to 100', () => {
  const f = tileFigures(gpu({ utilization: null, memoryUsed: null }));
  assert.equal(f.util.value, '–');
  assert.equal(f.util.share, 0);
  assert.equal(f.mem.share, 0);
  assert.equal(tileFigures(gpu({ utilization: 130, memoryUsed: 90 * GIB })).util.share, 100);
  assert.equal(tileFigures(gpu({ memoryUsed: 90 * GIB })).mem.share, 100);
});

test('the lines: each user named with what they hold, "no processes", and how many more there are', () => {
  const users = [
    { user: 'ann', memoryBytes: 4 * GIB, processes: 2 },
    { user: 'bob', memoryBytes: 512 * 1024 ** 2, processes: 1 },
  ];
  assert.deepEqual(tileFigures(gpu({ users, otherUsers: 3 })).lines, [
    { name: 'ann', detail: '4.0 GiB · 2 proc' },
    { name: 'bob', detail: '512 MiB · 1 proc' },
    { name: null, detail: '+3 more' },
  ]);
  assert.deepEqual(tileFigures(gpu()).lines, [{ name: null, detail: 'no processes' }]);
  assert.equal(userLineCount(gpu({ users, otherUsers: 3 })), tileFigures(gpu({ users, otherUsers: 3 })).lines.length);
  assert.equal(userLineCount(gpu()), tileFigures(gpu()).lines.length);
});

test('rows: the pointer at each row\'s top and last pixel finds that row, and the gaps and below find none', () => {
  const lines = 4;
  const tops = rowTops(lines);
  assert.equal(rowAt(tops.util, lines), 'util');
  assert.equal(rowAt(tops.util + FIGURES.meterLine - 0.5, lines), 'util');
  assert.equal(rowAt(tops.mem, lines), 'mem');
  assert.equal(rowAt(tops.mem - 1, lines), null, 'the gap between the meters');
  tops.users.forEach((top, i) => assert.equal(rowAt(top + 1, lines), i));
  const last = tops.users[lines - 1] + FIGURES.userLine;
  assert.equal(last, figuresHeight(lines), 'the last line ends where the canvas does');
  assert.equal(rowAt(last, lines), null);
});

test('a meter\'s bar fills its share of the room between the label and the value, and never less than nothing', () => {
  const bar = meterBar(200, 40, 50);
  assert.equal(bar.x, FIGURES.labelWidth + FIGURES.gap);
  assert.equal(bar.x + bar.width + FIGURES.gap + 40, 200);
  assert.equal(bar.filled, bar.width / 2);
  assert.deepEqual(meterBar(20, 40, 50), { x: bar.x, width: 0, filled: 0 });
});

test('an idle GPU\'s figures are the same from one update to the next; any word or share that moves is not', () => {
  const users = [{ user: 'ann', memoryBytes: 4 * GIB, processes: 2 }];
  const idle = tileFigures(gpu({ users }));
  assert.equal(sameFigures(idle, tileFigures(gpu({ users: users.map((u) => ({ ...u })) }))), true, 'new objects, same words');
  assert.equal(sameFigures(null, idle), false, 'nothing drawn yet');
  assert.equal(sameFigures(idle, tileFigures(gpu({ users, utilization: 43 }))), false, 'utilization');
  assert.equal(sameFigures(idle, tileFigures(gpu({ users, memoryUsed: 20 * GIB + 1 }))), false, 'a memory share that moves under the same words');
  assert.equal(sameFigures(idle, tileFigures(gpu({ users: [{ ...users[0], processes: 3 }] }))), false, 'a user line');
  assert.equal(sameFigures(idle, tileFigures(gpu({ users, otherUsers: 1 }))), false, 'a line more');
});
