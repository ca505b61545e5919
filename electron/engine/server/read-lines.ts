// Newline-delimited text from a stream (the engine's socket protocol, a child's output):
// each whole line to onLine as it arrives; what is pending can be bounded by the caller.
export interface LineReader {
  /** Characters received after the last newline. */
  pending(): number;
  /** Those characters (a last line that has no newline yet). */
  rest(): string;
}

export function readLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): LineReader {
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      onLine(line);
    }
  });
  return { pending: () => buffer.length, rest: () => buffer };
}
