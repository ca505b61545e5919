// The notices' corner: the first that leaves every card they speak of uncovered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cornerBox, freeCorner } from './notice-placement.js';

const viewport = { width: 1440, height: 1000 };
const size = { width: 460, height: 73 };

test('top right when nothing is under it', () => {
  assert.equal(freeCorner(size, viewport, [{ x: 14, y: 300, width: 600, height: 200 }]), 'top-right');
  assert.deepEqual(cornerBox('top-right', size, viewport), { x: 966, y: 52, width: 460, height: 73 });
});

test('a full-width GPU card under the top: the notices go to the bottom right', () => {
  // the box seen covered in the console test: GPU 0's card across the window, under the header
  assert.equal(freeCorner(size, viewport, [{ x: 14, y: 83, width: 1412, height: 180 }]), 'bottom-right');
});

test('cards at the top and bottom right: the notices go left', () => {
  const avoid = [{ x: 14, y: 83, width: 1412, height: 180 }, { x: 1000, y: 900, width: 300, height: 80 }];
  assert.equal(freeCorner(size, viewport, avoid), 'bottom-left');
});

test('where every corner covers something, the corner covering least', () => {
  // a strip across the top, a card in each bottom corner: 126 × 26 px of the right one is less than 186 × 36 of the left
  const avoid = [{ x: 0, y: 0, width: 1440, height: 130 }, { x: 0, y: 950, width: 200, height: 50 }, { x: 1300, y: 960, width: 140, height: 40 }];
  assert.equal(freeCorner(size, viewport, avoid), 'bottom-right');
});
