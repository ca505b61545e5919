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
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

const show = (value: unknown): string => {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? text.slice(0, 57) + '...' : text;
};

export function string(options: { min?: number; max?: number; pattern?: RegExp; describe?: string } = {}): Schema<string> {
  return {
    parse(value, path = '') {
      if (typeof value !== 'string') throw new ValidationError(path, `must be a string, got ${show(value)}`);
      if (options.min !== undefined && value.length < options.min) throw new ValidationError(path, options.min === 1 ? 'must not be empty' : `must be at least ${options.min} characters`);
      if (options.max !== undefined && value.length > options.max) throw new ValidationError(path, `must be at most ${options.max} characters`);
      if (options.pattern && !options.pattern.test(value)) throw new ValidationError(path, `must be ${options.describe ?? `like ${options.pattern}`}, got ${show(value)}`);
      return value;
    },
  };
}

export function number(options: { min?: number; max?: number; integer?: boolean; unit?: string } = {}): Schema<number> {
  const unit = options.unit ? ` ${options.unit}` : '';
  return {
    parse(value, path = '') {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new ValidationError(path, `must be a number, got ${show(value)}`);
      if (options.integer && !Number.isInteger(value)) throw new ValidationError(path, `must be a whole number, got ${value}`);
      if (options.min !== undefined && value < options.min) throw new ValidationError(path, `must be at least ${options.min}${unit}, got ${value}`);
      if (options.max !== undefined && value > options.max) throw new ValidationError(path, `must be at most ${options.max}${unit}, got ${value}`);
      return value;
    },
  };
}

export const boolean = (): Schema<boolean> => ({
  parse(value, path = '') {
    if (typeof value !== 'boolean') throw new ValidationError(path, `must be true or false, got ${show(value)}`);
    return value;
  },
});

export function oneOf<const T extends readonly string[]>(choices: T): Schema<T[number]> {
  return {
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
    parse(value, path = '') {
      if (!Array.isArray(value)) throw new ValidationError(path, `must be a list, got ${show(value)}`);
      if (options.min !== undefined && value.length < options.min) throw new ValidationError(path, `must have at least ${options.min} item${options.min === 1 ? '' : 's'}`);
      if (options.max !== undefined && value.length > options.max) throw new ValidationError(path, `must have at most ${options.max} items`);
      return value.map((v, i) => item.parse(v, `${path}[${i}]`));
    },
  };
}

export function optional<T>(inner: Schema<T>): Schema<T | undefined> & { optional: true } {
  return { optional: true, parse: (value, path) => (value === undefined ? undefined : inner.parse(value, path)) };
}

export function nullable<T>(inner: Schema<T>): Schema<T | null> {
  return { parse: (value, path) => (value === null ? null : inner.parse(value, path)) };
}

export function union<A, B>(a: Schema<A>, b: Schema<B>, describe: string): Schema<A | B> {
  return {
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
export function object<S extends Shape>(shape: S): Schema<ObjectOf<S>> {
  return {
    parse(value, path = '') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ValidationError(path, `must be an object, got ${show(value)}`);
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (!Object.hasOwn(shape, key)) throw new ValidationError(path ? `${path}.${key}` : key, `is not a known field (known: ${Object.keys(shape).join(', ') || 'none'})`);
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
