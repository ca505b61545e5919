// Small runtime schemas: every request from a UI or socket is checked against one
// before it reaches the engine, so a bad request gets a clear error and changes nothing.

export class ValidationError extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(path ? `${path}: ${problem}` : problem);
    this.name = 'ValidationError';
  }
}

export interface Schema<T> {
  parse(value: unknown, path?: string): T;
  /** What it accepts, for a test to check that every field is bounded. */
  readonly info?: SchemaInfo;
}

/** A schema's kind and bounds (a custom schema says which ones it applies, or what it wraps). */
export type SchemaInfo =
  | { type: 'string'; max?: number }
  | { type: 'number'; min?: number; max?: number }
  | { type: 'boolean' }
  | { type: 'choice'; choices: readonly string[] }
  | { type: 'array'; max?: number; item: Schema<unknown> }
  | { type: 'object'; shape: Record<string, Schema<unknown>> }
  | { type: 'either'; options: Array<Schema<unknown>> };

export type Infer<S> = S extends Schema<infer T> ? T : never;

const SHOWN = 60;

/** A value as JSON, cut to a few dozen characters; it reads at most a few levels and items, so any input is cheap to show. */
export function show(value: unknown): string {
  const text = brief(value, 3);
  return text.length > SHOWN ? text.slice(0, SHOWN - 3) + '...' : text;
}

function brief(value: unknown, levels: number): string {
  if (typeof value === 'string') return JSON.stringify(value.length > SHOWN ? value.slice(0, SHOWN) : value);
  if (typeof value !== 'object' || value === null) return typeof value === 'number' || typeof value === 'boolean' || value === null ? String(value) : typeof value;
  if (levels === 0) return Array.isArray(value) ? '[...]' : '{...}';
  if (Array.isArray(value)) return `[${value.slice(0, 5).map((v) => brief(v, levels - 1)).join(',')}${value.length > 5 ? ',...' : ''}]`;
  const keys = Object.keys(value).slice(0, 6);
  const shown = keys.slice(0, 5).map((k) => `${JSON.stringify(k.slice(0, SHOWN))}:${brief((value as Record<string, unknown>)[k], levels - 1)}`);
  return `{${shown.join(',')}${keys.length > 5 ? ',...' : ''}}`;
}

/** A key as it appears in an error's path: an unknown key may be any size. */
const keyPath = (path: string, key: string): string => {
  const name = key.length > 40 ? `${key.slice(0, 40)}...` : key;
  return path ? `${path}.${name}` : name;
};

/**
 * Refuse a value nested deeper than `maxDepth` lists or objects, before any schema or
 * serializer recurses into it (20,000 levels overflow the stack of JSON.stringify).
 */
export function checkNesting(value: unknown, maxDepth: number, path = ''): void {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= maxDepth) throw new ValidationError(path, `nests deeper than ${maxDepth} levels of lists and objects`);
    for (const child of Array.isArray(item) ? item : Object.values(item)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
}

export function string(options: { min?: number; max?: number; pattern?: RegExp; describe?: string } = {}): Schema<string> {
  return {
    info: { type: 'string', max: options.max },
    parse(value, path = '') {
      if (typeof value !== 'string') throw new ValidationError(path, `must be a string, got ${show(value)}`);
      if (options.min !== undefined && value.length < options.min) throw new ValidationError(path, options.min === 1 ? 'must not be empty' : `must be at least ${options.min} characters`);
      if (options.max !== undefined && value.length > options.max) throw new ValidationError(path, `must be at most ${options.max} characters`);
      if (options.pattern && !options.pattern.test(value)) throw new ValidationError(path, `must be ${options.describe ?? `like ${options.pattern}`}, got ${show(value)}`);
      return value;
    },
  };
}

export function number(options: { min?: number; max?: number; integer?: boolean; unit?: string; describeBound?: (bound: number) => string } = {}): Schema<number> {
  const unit = options.unit ? ` ${options.unit}` : '';
  const bound = (n: number): string => `${n}${unit}${options.describeBound ? ` (${options.describeBound(n)})` : ''}`;
  return {
    info: { type: 'number', min: options.min, max: options.max },
    parse(value, path = '') {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new ValidationError(path, `must be a number, got ${show(value)}`);
      if (options.integer && !Number.isInteger(value)) throw new ValidationError(path, `must be a whole number, got ${value}`);
      if (options.min !== undefined && value < options.min) throw new ValidationError(path, `must be at least ${bound(options.min)}, got ${value}`);
      if (options.max !== undefined && value > options.max) throw new ValidationError(path, `must be at most ${bound(options.max)}, got ${value}`);
      return value;
    },
  };
}

export const boolean = (): Schema<boolean> => ({
  info: { type: 'boolean' },
  parse(value, path = '') {
    if (typeof value !== 'boolean') throw new ValidationError(path, `must be true or false, got ${show(value)}`);
    return value;
  },
});

export function oneOf<const T extends readonly string[]>(choices: T): Schema<T[number]> {
  return {
    info: { type: 'choice', choices },
    parse(value, path = '') {
      if (typeof value !== 'string' || !choices.includes(value)) {
        throw new ValidationError(path, `must be one of ${choices.map((c) => `"${c}"`).join(', ')}; got ${show(value)}`);
      }
      return value as T[number];
    },
  };
}

export function array<T>(item: Schema<T>, options: { min?: number; max?: number } = {}): Schema<T[]> {
  return {
    info: { type: 'array', max: options.max, item },
    parse(value, path = '') {
      if (!Array.isArray(value)) throw new ValidationError(path, `must be a list, got ${show(value)}`);
      if (options.min !== undefined && value.length < options.min) throw new ValidationError(path, `must have at least ${options.min} item${options.min === 1 ? '' : 's'}`);
      if (options.max !== undefined && value.length > options.max) throw new ValidationError(path, `must have at most ${options.max} items`);
      return value.map((v, i) => item.parse(v, `${path}[${i}]`));
    },
  };
}

export function optional<T>(inner: Schema<T>): Schema<T | undefined> & { optional: true } {
  return { optional: true, info: { type: 'either', options: [inner] }, parse: (value, path) => (value === undefined ? undefined : inner.parse(value, path)) };
}

export function nullable<T>(inner: Schema<T>): Schema<T | null> {
  return { info: { type: 'either', options: [inner] }, parse: (value, path) => (value === null ? null : inner.parse(value, path)) };
}

export function union<A, B>(a: Schema<A>, b: Schema<B>, describe: string): Schema<A | B> {
  return {
    info: { type: 'either', options: [a, b] },
    parse(value, path = '') {
      try {
        return a.parse(value, path);
      } catch {
        try {
          return b.parse(value, path);
        } catch {
          throw new ValidationError(path, `must be ${describe}, got ${show(value)}`);
        }
      }
    },
  };
}

type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends { optional: true } ? K : never }[keyof S];
type ObjectOf<S extends Shape> = { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> };

/** A plain object with exactly these keys: an unknown key is an error (a typo must not be ignored). */
export function object<S extends Shape>(shape: S): Schema<ObjectOf<S>> & { info: { type: 'object'; shape: S } } {
  return {
    info: { type: 'object', shape },
    parse(value, path = '') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ValidationError(path, `must be an object, got ${show(value)}`);
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (!Object.hasOwn(shape, key)) throw new ValidationError(keyPath(path, key), `is not a known field (known: ${Object.keys(shape).join(', ') || 'none'})`);
      }
      const out: Record<string, unknown> = {};
      for (const [key, schema] of Object.entries(shape)) {
        if (record[key] === undefined && !('optional' in schema)) throw new ValidationError(path ? `${path}.${key}` : key, 'is required');
        const parsed = schema.parse(record[key], path ? `${path}.${key}` : key);
        if (parsed !== undefined) out[key] = parsed;
      }
      return out as ObjectOf<S>;
    },
  };
}
