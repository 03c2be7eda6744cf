// A strict JSON reader for manifests: one pass, no recursion beyond MAX_DEPTH, a value budget,
// duplicate keys refused (JSON.parse keeps the last one silently), and errors that give the offset
// of the problem without quoting the file's content.
import { LimitError, MAX_DEPTH, MAX_NODES } from './limits';

export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** A key as it may appear in an error: short, and only printable characters. */
function shownKey(key: string): string {
  const short = key.length > 64 ? `${key.slice(0, 64)}…` : key;
  return JSON.stringify(short);
}

class Reader {
  private pos = 0;
  private nodes = 0;

  constructor(private readonly text: string) {}

  read(): unknown {
    this.space();
    const value = this.value(1);
    this.space();
    if (this.pos < this.text.length) this.fail('unexpected content after the top-level value');
    return value;
  }

  private fail(message: string, at = this.pos): never {
    throw new JsonSyntaxError(message, at);
  }

  private space(): void {
    const t = this.text;
    while (this.pos < t.length && WS.has(t.charCodeAt(this.pos))) this.pos++;
  }

  private count(): void {
    if (++this.nodes > MAX_NODES) throw new LimitError(`more than ${MAX_NODES} values (the limit for a manifest)`);
  }

  private value(depth: number): unknown {
    if (this.pos >= this.text.length) this.fail('unexpected end of file');
    this.count();
    const c = this.text[this.pos];
    if (c === '{' || c === '[') {
      if (depth > MAX_DEPTH) throw new LimitError(`nested deeper than ${MAX_DEPTH} levels (the limit for a manifest)`);
      return c === '{' ? this.object(depth) : this.array(depth);
    }
    if (c === '"') return this.string();
    if (this.text.startsWith('true', this.pos)) return this.word(4, true);
    if (this.text.startsWith('false', this.pos)) return this.word(5, false);
    if (this.text.startsWith('null', this.pos)) return this.word(4, null);
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (m) {
      this.pos += m[0].length;
      return Number(m[0]);
    }
    return this.fail('expected a value');
  }

  private word<T>(length: number, value: T): T {
    this.pos += length;
    return value;
  }

  private object(depth: number): Record<string, unknown> {
    this.pos++; // {
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.space();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.space();
      if (this.text[this.pos] !== '"') this.fail('expected a field name in double quotes');
      const keyAt = this.pos;
      const key = this.string();
      if (seen.has(key)) this.fail(`duplicate field ${shownKey(key)}: field names must be unique`, keyAt);
      seen.add(key);
      this.space();
      if (this.text[this.pos] !== ':') this.fail("expected ':' after a field name");
      this.pos++;
      this.space();
      const v = this.value(depth + 1);
      // defineProperty: a field named __proto__ is data, not the object's prototype.
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      this.space();
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === '}') {
        this.pos++;
        return out;
      }
      this.fail("expected ',' or '}' after a field value");
    }
  }

  private array(depth: number): unknown[] {
    this.pos++; // [
    const out: unknown[] = [];
    this.space();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.space();
      out.push(this.value(depth + 1));
      this.space();
      const c = this.text[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === ']') {
        this.pos++;
        return out;
      }
      this.fail("expected ',' or ']' after a list item");
    }
  }

  private string(): string {
    const t = this.text;
    let i = ++this.pos; // opening quote
    let out = '';
    let chunkStart = i;
    for (;;) {
      if (i >= t.length) this.fail('unterminated string', i);
      const code = t.charCodeAt(i);
      if (code === 0x22) {
        out += t.slice(chunkStart, i);
        this.pos = i + 1;
        return out;
      }
      if (code < 0x20) this.fail('control character in string (escape it)', i);
      if (code !== 0x5c) {
        i++;
        continue;
      }
      out += t.slice(chunkStart, i);
      const e = t[i + 1];
      if (e === 'u') {
        const hex = t.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid \\u escape in string', i);
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else {
        const r = e === undefined ? undefined : ESCAPES[e];
        if (r === undefined) this.fail('invalid escape in string', i);
        out += r;
        i += 2;
      }
      chunkStart = i;
    }
  }
}

/** Parses one JSON text. Throws JsonSyntaxError (with the offset) or LimitError. */
export function readJson(text: string): unknown {
  return new Reader(text).read();
}
