// What an audit row keeps of a request: never its raw params (every user may read the log, and a
// refused request may be megabytes deep), but the fields it understood, each value cut short, and
// the size and SHA-256 of the whole when anything was left out. A row has a byte cap.
import { createHash } from 'node:crypto';
import type { AuditEntry } from '../../../shared/jobs.js';

/** The params of one audit row, as JSON, are at most this long. */
export const AUDIT_PARAMS_MAX_BYTES = 2048;
/** An audit row's result (an error message) is cut to this. */
export const AUDIT_RESULT_MAX_CHARS = 500;
/** Where a summary says what it left out: no API field has this name. */
export const NOT_KEPT = '(not kept)';

const STRING_KEPT = 120;
const ITEMS_KEPT = 8;
const KEYS_KEPT = 16;
const LEVELS_KEPT = 3;
/** The digest reads at most this much of a request (transports already cap a message far below). */
const DIGEST_MAX_BYTES = 64 * 1024 * 1024;

export interface NotKept {
  /** The size of the whole params as JSON, and its SHA-256 (hex). */
  bytes: number;
  sha256: string;
  /** False when the params were larger than the digest reads: bytes and sha256 are of the first DIGEST_MAX_BYTES. */
  complete?: false;
  /** Keys the method does not know, by name (their values are not kept). */
  unknownKeys?: string[];
  /** Why nothing else is shown: the params were not an object, or even their summary was over the cap. */
  note?: string;
}

/**
 * The bounded form of a request's params for the audit log. `known`: the method's fields (the
 * others are named, not kept); null keeps every key. `env` keeps only its size: it may hold secrets.
 */
export function auditedParams(params: unknown, known: readonly string[] | null): unknown {
  if (params === undefined || params === null) return params ?? null;
  let cut = false;
  const keep = (value: unknown, levels: number): unknown => {
    if (typeof value === 'string') {
      if (value.length <= STRING_KEPT) return value;
      cut = true;
      return `${value.slice(0, STRING_KEPT)}… (${value.length} characters)`;
    }
    if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
    if (typeof value !== 'object') return (cut = true), `(${typeof value})`;
    if (levels === 0) return (cut = true), Array.isArray(value) ? `(a list of ${value.length} items)` : '(an object)';
    if (Array.isArray(value)) {
      const items = value.slice(0, ITEMS_KEPT).map((v) => keep(v, levels - 1));
      if (value.length > ITEMS_KEPT) (cut = true), items.push(`… (${value.length} items)`);
      return items;
    }
    const out: Record<string, unknown> = {};
    const keys = Object.keys(value);
    for (const key of keys.slice(0, KEYS_KEPT)) put(out, key.slice(0, STRING_KEPT), keep((value as Record<string, unknown>)[key], levels - 1));
    if (keys.length > KEYS_KEPT) cut = true;
    return out;
  };

  if (typeof params !== 'object' || Array.isArray(params)) return { [NOT_KEPT]: { ...digestOf(params), note: `the params were ${Array.isArray(params) ? 'a list' : `a ${typeof params}`}, not an object` } };
  const summary: Record<string, unknown> = {};
  const unknownKeys: string[] = [];
  for (const key of Object.keys(params)) {
    const value = (params as Record<string, unknown>)[key];
    if (known !== null && !known.includes(key)) {
      cut = true;
      if (unknownKeys.length < ITEMS_KEPT) unknownKeys.push(key.length > 40 ? `${key.slice(0, 40)}…` : key);
    } else if (key === 'env' && Array.isArray(value)) {
      summary.env = `${value.length} variables (not kept)`;
    } else if (Object.keys(summary).length < KEYS_KEPT) {
      put(summary, key.slice(0, STRING_KEPT), keep(value, LEVELS_KEPT));
    } else {
      cut = true;
    }
  }
  if (cut) summary[NOT_KEPT] = { ...digestOf(params), ...(unknownKeys.length ? { unknownKeys } : {}) };
  if (JSON.stringify(summary).length <= AUDIT_PARAMS_MAX_BYTES) return summary;
  return { [NOT_KEPT]: { ...digestOf(params), ...(unknownKeys.length ? { unknownKeys } : {}), note: `even its summary was over ${AUDIT_PARAMS_MAX_BYTES} bytes; fields: ${Object.keys(summary).join(', ').slice(0, 300)}` } };
}

/**
 * An audit entry as it may be kept and written: its params bounded, its result cut short. Without
 * `known` (the store, for whatever recorded the entry), params already small and shallow stay as they are.
 */
export function boundedAuditEntry(entry: AuditEntry, known: readonly string[] | null = null): AuditEntry {
  const result = entry.result.length > AUDIT_RESULT_MAX_CHARS ? `${entry.result.slice(0, AUDIT_RESULT_MAX_CHARS)}… (${entry.result.length} characters)` : entry.result;
  const params = known === null && fitsAsIs(entry.params) ? entry.params : auditedParams(entry.params, known);
  return { ...entry, who: entry.who.slice(0, 256), what: entry.what.slice(0, 256), params, result };
}

/** Small enough to keep whole: a few levels, a few hundred values, at most the row cap as JSON. */
function fitsAsIs(params: unknown): boolean {
  const stack: Array<[unknown, number]> = [[params, 0]];
  let values = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (++values > 512 || depth > LEVELS_KEPT + 2) return false;
    if (typeof value === 'string' && value.length > AUDIT_PARAMS_MAX_BYTES) return false;
    if (typeof value === 'object' && value !== null) for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  try {
    return (JSON.stringify(params) ?? '').length <= AUDIT_PARAMS_MAX_BYTES;
  } catch {
    return false; // a BigInt, a toJSON that throws: summarised instead
  }
}

/** An own property whatever its name ("__proto__" included), as JSON.parse makes it. */
function put(into: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The size and SHA-256 of a value's JSON, written without recursion (any depth) and without building the text. */
export function digestOf(value: unknown): NotKept {
  const hash = createHash('sha256');
  const writer = { hash, bytes: 0, full: false };
  const write = (text: string): void => {
    if (writer.full) return;
    const room = DIGEST_MAX_BYTES - writer.bytes;
    const piece = text.length > room ? text.slice(0, room) : text;
    writer.hash.update(piece);
    writer.bytes += Buffer.byteLength(piece);
    if (piece.length < text.length) writer.full = true;
  };
  serialize(value, write, () => writer.full);
  return { bytes: writer.bytes, sha256: hash.digest('hex'), ...(writer.full ? { complete: false as const } : {}) };
}

type Step = { value: unknown } | { text: string } | { close: string; of: object };

/** JSON.stringify's output for plain data, in pieces, from an explicit stack; a cycle is written as "[cycle]". */
function serialize(root: unknown, write: (text: string) => void, full: () => boolean): void {
  const stack: Step[] = [{ value: root }];
  const open = new Set<object>();
  while (stack.length > 0 && !full()) {
    const step = stack.pop()!;
    if ('text' in step) {
      write(step.text);
      continue;
    }
    if ('close' in step) {
      write(step.close);
      open.delete(step.of);
      continue;
    }
    const value = step.value;
    if (typeof value !== 'object' || value === null) {
      write(typeof value === 'bigint' ? `"${value}"` : (JSON.stringify(value) ?? 'null'));
      continue;
    }
    if (open.has(value)) {
      write('"[cycle]"');
      continue;
    }
    open.add(value);
    const list = Array.isArray(value);
    write(list ? '[' : '{');
    const inner: Step[] = [];
    if (list) {
      value.forEach((item, i) => inner.push(...(i > 0 ? [{ text: ',' }] : []), { value: typeof item === 'function' ? null : item }));
    } else {
      for (const [key, item] of Object.entries(value)) {
        if (item === undefined || typeof item === 'function') continue;
        inner.push({ text: `${inner.length > 0 ? ',' : ''}${JSON.stringify(key)}:` }, { value: item });
      }
    }
    stack.push({ close: list ? ']' : '}', of: value });
    for (let i = inner.length - 1; i >= 0; i--) stack.push(inner[i]);
  }
}
