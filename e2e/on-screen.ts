// Where things are on the page, for tests of what a person can see.
import assert from 'node:assert/strict';
import type { Locator } from 'playwright-core';

/** A notice must leave the card it speaks of in sight: their boxes on screen do not overlap. */
export async function assertUncovered(notice: Locator, card: Locator): Promise<void> {
  const [a, b] = [await notice.boundingBox(), await card.boundingBox()];
  assert.ok(a && b, 'both on screen');
  const overlap = a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  assert.ok(!overlap, `the notice ${JSON.stringify(a)} covers the card ${JSON.stringify(b)}`);
}
