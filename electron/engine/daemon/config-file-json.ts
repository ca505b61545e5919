// JSON for a file a person edits: every syntax error at a line and column (Node's JSON.parse
// often names neither), and a key given twice is an error (JSON.parse keeps the last silently).

export class JsonSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    readonly problem: string,
  ) {
    super(`line ${line}, column ${column}: ${problem}`);
    this.name = 'JsonSyntaxError';
  }
}

const MAX_DEPTH = 64;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WORDS = { true: true, false: false, null: null } as const;

/** Parse JSON text to the same value JSON.parse gives, or throw a JsonSyntaxError saying where and what; `whatToWrite` says what an empty file should hold. */
export function parseJsonStrict(text: string, whatToWrite = 'an empty configuration is {}'): unknown {
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark some editors write

  const fail = (problem: string, index = at): never => {
    const before = text.slice(0, index);
    const line = before.split('\n').length;
    throw new JsonSyntaxError(line, index - before.lastIndexOf('\n'), problem);
  };
  const found = (): string => {
    if (at >= text.length) return 'the end of the file';
    const rest = text.slice(at);
    if (rest.startsWith('//') || rest.startsWith('/*')) return 'a comment (JSON has none: the README documents each key)';
    return /^"(?:[^"\\\n]|\\.){0,40}"/.exec(rest)?.[0] ?? JSON.stringify(/^[\w.+-]{1,20}/.exec(rest)?.[0] ?? rest[0]);
  };
  const skipSpace = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at])) at++;
  };
  const expect = (what: string): never => fail(`expected ${what}, found ${found()}`);

  const string = (): string => {
    STRING.lastIndex = at;
    const match = STRING.exec(text);
    if (!match) {
      for (let i = at + 1; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (text[i] === '"') break;
        if (c < 0x20) fail(c === 0x0a ? 'a string must end on the line it starts ("\\n" writes a line break)' : 'a control character inside a string (write it as \\u escape)', i);
        if (text[i] === '\\') {
          if (!/^\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/.test(text.slice(i, i + 6))) fail(`"${text.slice(i, i + 2)}" is not a JSON escape`, i);
          i++;
        }
      }
      fail('a string that never ends (a missing closing ")');
    }
    at += match![0].length;
    return JSON.parse(match![0]) as string;
  };

  const value = (depth: number): unknown => {
    if (depth > MAX_DEPTH) fail(`nested more than ${MAX_DEPTH} levels deep`);
    skipSpace();
    const c = text[at];
    if (c === '{') return object(depth);
    if (c === '[') return array(depth);
    if (c === '"') return string();
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (number) {
      at += number[0].length;
      return Number(number[0]);
    }
    for (const [word, meaning] of Object.entries(WORDS)) {
      if (text.startsWith(word, at) && !/[\w]/.test(text[at + word.length] ?? '')) {
        at += word.length;
        return meaning;
      }
    }
    return expect('a value (an object, list, string, number, true, false or null)');
  };

  const object = (depth: number): Record<string, unknown> => {
    at++; // {
    const out: Record<string, unknown> = {};
    skipSpace();
    if (text[at] === '}') {
      at++;
      return out;
    }
    for (;;) {
      skipSpace();
      if (text[at] === '}') fail('a comma before "}" (JSON allows no trailing comma)');
      if (text[at] !== '"') expect('a key in double quotes');
      const keyAt = at;
      const key = string();
      if (Object.hasOwn(out, key)) fail(`the key "${key}" appears twice in this object (only one would count)`, keyAt);
      skipSpace();
      if (text[at] !== ':') expect(`":" after the key "${key}"`);
      at++;
      // defined, not assigned: "__proto__" stays an own key (as JSON.parse makes it) for the schema to refuse
      Object.defineProperty(out, key, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
      skipSpace();
      if (text[at] === ',') {
        at++;
        continue;
      }
      if (text[at] === '}') {
        at++;
        return out;
      }
      expect(`"," or "}" after the value of "${key}"`);
    }
  };

  const array = (depth: number): unknown[] => {
    at++; // [
    const out: unknown[] = [];
    skipSpace();
    if (text[at] === ']') {
      at++;
      return out;
    }
    for (;;) {
      skipSpace();
      if (text[at] === ']') fail('a comma before "]" (JSON allows no trailing comma)');
      out.push(value(depth + 1));
      skipSpace();
      if (text[at] === ',') {
        at++;
        continue;
      }
      if (text[at] === ']') {
        at++;
        return out;
      }
      expect('"," or "]" after a list item');
    }
  };

  skipSpace();
  if (at >= text.length) fail(`the file is empty (${whatToWrite})`);
  const result = value(0);
  skipSpace();
  if (at < text.length) expect('nothing after the top-level value');
  return result;
}
