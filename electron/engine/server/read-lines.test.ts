// Line reading costs each character received once, however the stream cuts it: a client that sends
// one byte at a time must not make the engine examine its whole pending line again for each byte.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { readLines } from './read-lines.js';

/** Feed `pieces` to a fresh reader, one 'data' event each; the lines it gave and the reader. */
function feed(pieces: string[]): { lines: string[]; reader: ReturnType<typeof readLines> } {
  const stream = new PassThrough();
  const lines: string[] = [];
  const reader = readLines(stream, (line) => lines.push(line));
  for (const piece of pieces) stream.emit('data', piece); // one event per piece, as a socket read would give them
  return { lines, reader };
}

test('a 200,000-character line sent one character at a time is examined once per character, not once per character per arrival', () => {
  const line = 'x'.repeat(200_000);
  const { lines, reader } = feed([...line, '\n', ...'yz']);
  assert.deepEqual(lines.map((l) => l.length), [200_000]);
  assert.deepEqual([reader.pending(), reader.rest()], [2, 'yz']);
  const received = line.length + 3;
  assert.ok(reader.scanned() <= received, `${reader.scanned()} characters examined for ${received} received`);
});

test('lines split anywhere across pieces, several in one piece, empty lines and a last line without newline come out as sent', () => {
  const text = 'alpha\nbe\n\ngamma delta\nε-unicode ✓\nrest';
  const expected = ['alpha', 'be', '', 'gamma delta', 'ε-unicode ✓'];
  for (const size of [1, 2, 3, 7, text.length]) {
    const pieces: string[] = [];
    for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
    const { lines, reader } = feed(pieces);
    assert.deepEqual(lines, expected, `pieces of ${size}`);
    assert.deepEqual([reader.pending(), reader.rest()], [4, 'rest'], `pieces of ${size}`);
    assert.ok(reader.scanned() <= text.length, `pieces of ${size}: ${reader.scanned()} examined for ${text.length}`);
  }
});
