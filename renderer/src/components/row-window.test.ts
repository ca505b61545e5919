// The table draws the rows in its box and a few each side; the spacers stand for the rest.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OVERSCAN_ROWS, rowWindow } from './row-window.js';

test('at the top: the first screenful and the overscan below it, the rest one spacer', () => {
  assert.deepEqual(rowWindow(512, 24, 480, 0), { first: 0, end: 20 + OVERSCAN_ROWS, padTop: 0, padBottom: (512 - 26) * 24 });
});

test('scrolled: the rows in view with overscan each side, spacers add up to the whole list', () => {
  const w = rowWindow(512, 24, 480, 100 * 24 + 5);
  assert.equal(w.first, 100 - OVERSCAN_ROWS);
  assert.equal(w.end, 100 + 20 + OVERSCAN_ROWS);
  assert.equal(w.padTop + (w.end - w.first) * 24 + w.padBottom, 512 * 24);
});

test('a list that shrank under a scrolled box, or is shorter than the box, shows all it can', () => {
  assert.deepEqual(rowWindow(30, 24, 480, 400 * 24), { first: 10 - OVERSCAN_ROWS, end: 30, padTop: 4 * 24, padBottom: 0 });
  assert.deepEqual(rowWindow(5, 24, 480, 0), { first: 0, end: 5, padTop: 0, padBottom: 0 });
  assert.deepEqual(rowWindow(0, 24, 480, 0), { first: 0, end: 0, padTop: 0, padBottom: 0 });
});
