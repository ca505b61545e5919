// Newline-delimited text from a stream (the engine's socket protocol, a child's output):
// each whole line to onLine as it arrives; what is pending can be bounded by the caller.
// Each character is examined once: a client sending one byte at a time costs what its bytes do.
export interface LineReader {
  /** Characters received after the last newline. */
  pending(): number;
  /** Those characters (a last line that has no newline yet). */
  rest(): string;
  /** Characters examined for a newline so far: what reading lines has cost. */
  scanned(): number;
}

/** Pieces gathered into one string at a time: a line sent a byte at a time holds one string per this many bytes, not one per byte. */
const PIECES_PER_BLOCK = 256;

export function readLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): LineReader {
  // the text of a line still without its newline, searched already: joined once, when it ends
  let blocks: string[] = [];
  let pieces: string[] = [];
  let pending = 0;
  let scanned = 0;
  const hold = (piece: string): void => {
    pieces.push(piece);
    pending += piece.length;
    if (pieces.length < PIECES_PER_BLOCK) return;
    blocks.push(pieces.join(''));
    pieces = [];
  };
  const take = (): string => {
    const text = blocks.length === 0 && pieces.length === 1 ? pieces[0] : blocks.join('') + pieces.join('');
    blocks = [];
    pieces = [];
    pending = 0;
    return text;
  };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    let start = 0;
    let newline: number;
    while ((newline = chunk.indexOf('\n', start)) >= 0) {
      scanned += newline + 1 - start;
      hold(chunk.slice(start, newline));
      start = newline + 1;
      onLine(take());
    }
    if (start < chunk.length) {
      scanned += chunk.length - start;
      hold(chunk.slice(start));
    }
  });
  const rest = (): string => {
    const text = take();
    if (text) hold(text);
    return text;
  };
  return { pending: () => pending, rest, scanned: () => scanned };
}
