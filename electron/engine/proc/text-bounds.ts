// Bounds on text that reaches a snapshot from /proc or a process's environment, measured as it travels: bytes of JSON
// (a control character costs six, "\u0001"; a non-ASCII one its UTF-8 bytes).

/** A command line shows at most this much of itself (its arguments as a JSON array). */
export const ARGV_MAX_JSON_BYTES = 4096;
/** Any other text from a process (its command's name, container, unit, notebook, ssh session): about a line. */
export const TEXT_MAX_JSON_BYTES = 256;
/** What a cut text ends with; a cut command line says so in argvCut instead. */
const CUT_MARK = '…';

/** Bytes of a value's JSON (UTF-8), as the socket and the WebSocket carry it. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? 'null');

/** A text whose JSON is at most `maxBytes`: itself, or its longest prefix that fits with "…" after it. */
export function cutText(text: string, maxBytes = TEXT_MAX_JSON_BYTES): string {
  if (text.length * 6 + 2 <= maxBytes || jsonBytes(text) <= maxBytes) return text;
  const prefix = prefixWithin(text, maxBytes - (jsonBytes(CUT_MARK) - 2));
  return prefix + CUT_MARK;
}

/** cutText, passing null through. */
export const cutOptionalText = (text: string | null, maxBytes = TEXT_MAX_JSON_BYTES): string | null => (text === null ? null : cutText(text, maxBytes));

/**
 * The first arguments whose JSON array is at most `maxBytes`, the last of them cut when only part of it fits;
 * `cut` when anything was left out.
 */
export function cutArgv(args: readonly string[], maxBytes = ARGV_MAX_JSON_BYTES): { argv: string[]; cut: boolean } {
  const argv: string[] = [];
  let used = 2; // []
  for (const arg of args) {
    const separator = argv.length > 0 ? 1 : 0;
    const cost = jsonBytes(arg) + separator;
    if (used + cost <= maxBytes) {
      argv.push(arg);
      used += cost;
      continue;
    }
    const room = maxBytes - used - separator;
    const prefix = room > 2 ? prefixWithin(arg, room) : '';
    if (prefix !== '') argv.push(prefix);
    return { argv, cut: true };
  }
  return { argv, cut: false };
}

/** The longest prefix of `text` whose JSON is at most `maxBytes`, never ending in half a surrogate pair. */
function prefixWithin(text: string, maxBytes: number): string {
  const prefix = (n: number): string => {
    const code = text.charCodeAt(n - 1);
    return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
  };
  let fits = 0;
  let tooLong = text.length + 1;
  while (tooLong - fits > 1) {
    const mid = (fits + tooLong) >>> 1;
    if (jsonBytes(prefix(mid)) <= maxBytes) fits = mid;
    else tooLong = mid;
  }
  return fits === 0 ? '' : prefix(fits);
}
