// The stacked bands: each series sits on the ones below it, in the chart's pixels, and the
// pointer finds the band it is over.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TimelineData } from '../../data/sample-history.js';
import { bandAt, nearestRow, stackShapes } from './stack-shapes.js';

const data: TimelineData = {
  rows: [
    { t: 1000, a: 10, b: 20 },
    { t: 2000, a: 30, b: 5 },
  ],
  series: [
    { key: 'a', pid: 1, label: 'a', color: '#f00' },
    { key: 'b', pid: 2, label: 'b', color: '#0f0' },
  ],
  reported: true,
};
// x: a second per 100 px from the window's end at t = 2000; y: 100 px tall, value 0 at the bottom
const x = (t: number): number => 200 + t / 10;
const y = (v: number): number => 100 - v;

test('bands stack bottom to top in the series order, placed by the scales', () => {
  const { xs, shapes } = stackShapes(data, 2000, x, y);
  assert.deepEqual([...xs], [100, 200]);
  assert.equal(shapes[0].line, 'M100,90L200,70');
  assert.equal(shapes[0].area, 'M100,90L200,70L200,100L100,100Z');
  assert.equal(shapes[1].line, 'M100,70L200,65', 'b sits on a');
  assert.equal(shapes[1].area, 'M100,70L200,65L200,70L100,90Z');
  assert.deepEqual([...shapes[1].bottom], [...shapes[0].top]);
});

test('the pointer finds the nearest row and the band under it', () => {
  const layout = stackShapes(data, 2000, x, y);
  assert.equal(nearestRow(layout.xs, 0), 0);
  assert.equal(nearestRow(layout.xs, 149), 0);
  assert.equal(nearestRow(layout.xs, 151), 1);
  assert.equal(nearestRow(layout.xs, 999), 1);
  assert.equal(bandAt(layout, 0, 95), 'a');
  assert.equal(bandAt(layout, 0, 80), 'b');
  assert.equal(bandAt(layout, 0, 50), null, 'above the stack');
  assert.equal(nearestRow(new Float32Array(0), 10), -1);
});

test('a lone row is drawn across its column, so the first column of a window shows', () => {
  const lone: TimelineData = { ...data, rows: [{ t: 1000, a: 10, b: 20 }] };
  const { xs, shapes } = stackShapes(lone, 2000, x, y, 1000);
  assert.deepEqual([...xs], [50, 150]);
  assert.equal(shapes[0].line, 'M50,90L150,90');
  assert.equal(stackShapes(lone, 2000, x, y).xs.length, 1, 'without a column width it stays one point');
});

test('the canvas is traced through the same points as the SVG paths', () => {
  const { shapes } = stackShapes(data, 2000, x, y);
  const recorder = () => {
    let path = '';
    return { sink: { moveTo: (px: number, py: number) => (path += `M${px},${py}`), lineTo: (px: number, py: number) => (path += `L${px},${py}`), closePath: () => (path += 'Z') }, path: () => path };
  };
  for (const shape of shapes) {
    const line = recorder();
    shape.traceLine(line.sink);
    assert.equal(line.path(), shape.line);
    const area = recorder();
    shape.traceArea(area.sink);
    assert.equal(area.path(), shape.area);
  }
});
