// A fast reader for the YAML that tools write for manifests (block mappings and sequences, simple
// flow collections, plain and quoted one-line scalars), giving exactly what readYaml gives, or
// `undefined` for anything else, which readYaml then reads in full. The library costs ~1 ms of CPU
// for a 300-byte pod and 5-12 ms for a kubeadm manifest on the agent's baseline-only JIT, most of
// it in its generators; a flood of 2,000 manifests spent half the agent's CPU there.
// Scalars resolve through the library's own YAML 1.1 tags (the ones readYaml composes with), so
// `yes`, `0644` or `~` mean here what they mean there. Whatever could mean something subtle
// (anchors, tags, block scalars, escapes, comments after content, tabs, a second document, a key
// twice) is left to the library, which also says what is wrong with a file.
import { Document, isScalar, type ScalarTag, type SchemaOptions, type Tags } from 'yaml';

/**
 * Nesting past this is left to the library, which measures it against MAX_DEPTH (limits.ts) its own
 * way; a pod's is about 12.
 */
const SIMPLE_MAX_DEPTH = 24;
/**
 * Larger files are left to the library too: at most ~33,000 values fit in 64 KiB, so none of the
 * library's value limits (MAX_NODES, 50,000) can be passed here unmeasured.
 */
const SIMPLE_MAX_CHARS = 64 * 1024;

/** The composer's options for manifests: YAML 1.1, and dates stay strings (text to Kubernetes). */
export const MANIFEST_YAML_OPTIONS: { readonly version: '1.1'; readonly customTags: SchemaOptions['customTags'] } = {
  version: '1.1',
  customTags: (tags: Tags): Tags =>
    tags.filter((t) => typeof t === 'string' || t.tag !== 'tag:yaml.org,2002:timestamp'),
};

/**
 * Characters that may mean something this reader does not handle, anywhere in the file: comments
 * (rare in what tools write), escapes, merge keys. Anchors, aliases, tags and block scalars only
 * mean something at the start of a value (INDICATOR_START); inside one (`?a=1&b=*`) they are text.
 */
const DEFER_CHARS = /[\t\r\\#<]/;

/** Characters a plain scalar (or key) may not start with here. */
const INDICATOR_START = /^[-?:,[\]{}#&*!|>'"%@`]/;

let defaultTags: ScalarTag[] | undefined;
/** The default scalar tags, in the library's order of trial. */
function tags(): ScalarTag[] {
  defaultTags ??= (new Document(null, MANIFEST_YAML_OPTIONS).schema.tags as ScalarTag[]).filter(
    (t) => t.default === true && t.test !== undefined,
  );
  return defaultTags;
}

class Defer extends Error {}
const defer = (): never => {
  throw new Defer();
};

/** A plain scalar's value as the composer resolves it; defers where that is not plain data. */
function plainScalar(text: string): unknown {
  const tag = tags().find((t) => t.test!.test(text));
  if (!tag) return text;
  let failed = false;
  const resolved: unknown = tag.resolve(text, () => (failed = true), {} as never);
  // As the composer takes it: a tag may give a Scalar (booleans, null) or the bare value.
  const value = isScalar(resolved) ? resolved.value : resolved;
  if (
    failed ||
    (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
  )
    defer();
  return value;
}

function plainKey(text: string): string {
  if (text === '' || INDICATOR_START.test(text) || text.includes(':')) defer();
  const v = plainScalar(text);
  if (typeof v !== 'string') defer();
  return v as string;
}

function setKey(o: Record<string, unknown>, key: string, value: unknown): void {
  if (Object.hasOwn(o, key)) defer();
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

interface Line {
  indent: number;
  text: string;
}

interface Entry {
  readonly key: string;
  /** Undefined: nothing after the colon. */
  readonly rest: string | undefined;
}

/** `key: rest` or `key:`. */
function splitEntry(text: string): Entry | undefined {
  let key: string;
  let after: number;
  if (text[0] === '"' || text[0] === "'") {
    const end = text.indexOf(text[0], 1);
    if (end < 0) return undefined;
    key = text.slice(1, end);
    if (text[0] === "'" && text[end + 1] === "'") defer();
    after = end + 1;
    if (text[after] !== ':') return undefined;
  } else {
    const colon = text.search(/:( |$)/);
    if (colon < 0) return undefined;
    key = plainKey(text.slice(0, colon));
    after = colon;
  }
  const rest = text.slice(after + 1).trim();
  if (text[after + 1] !== undefined && text[after + 1] !== ' ') defer();
  return { key, rest: rest === '' ? undefined : rest };
}

/** One flow value at `s[at]`: its value and where it ends. */
function flowValue(s: string, at: number, depth: number): [unknown, number] {
  if (depth > SIMPLE_MAX_DEPTH) defer();
  const c = s[at];
  if (c === '[' || c === '{') {
    const close = c === '[' ? ']' : '}';
    const list: unknown[] = [];
    const map: Record<string, unknown> = {};
    let i = skipSpaces(s, at + 1);
    if (s[i] === close) return [c === '[' ? list : map, i + 1];
    for (;;) {
      if (c === '[') {
        const [v, end] = flowValue(s, i, depth + 1);
        list.push(v);
        i = end;
      } else {
        const [k, end] = flowValue(s, i, depth + 1);
        if (typeof k !== 'string' || s[end] !== ':' || s[end + 1] !== ' ') defer();
        const [v, vend] = flowValue(s, skipSpaces(s, end + 1), depth + 1);
        setKey(map, k as string, v);
        i = vend;
      }
      i = skipSpaces(s, i);
      if (s[i] === close) return [c === '[' ? list : map, i + 1];
      if (s[i] !== ',') defer();
      i = skipSpaces(s, i + 1);
      if (s[i] === close || s[i] === ',') defer();
    }
  }
  if (c === '"' || c === "'") {
    const end = s.indexOf(c, at + 1);
    if (end < 0 || (c === "'" && s[end + 1] === "'")) defer();
    return [s.slice(at + 1, end), end + 1];
  }
  const m = /^[^,[\]{}:#]*/.exec(s.slice(at))![0];
  const text = m.trimEnd();
  if (text === '' || INDICATOR_START.test(text)) defer();
  return [plainScalar(text), at + m.length];
}

function skipSpaces(s: string, i: number): number {
  while (s[i] === ' ') i++;
  return i;
}

/** A value written on the line of its key or dash. */
function inlineValue(text: string): unknown {
  const c = text[0];
  if (c === '[' || c === '{') {
    const [v, end] = flowValue(text, 0, 1);
    if (skipSpaces(text, end) !== text.length) defer();
    return v;
  }
  if (c === '"' || c === "'") {
    const end = text.indexOf(c, 1);
    if (end !== text.length - 1 || (c === "'" && text.slice(1, end).includes("'"))) defer();
    return text.slice(1, end);
  }
  // A dash starts a plain scalar (`--flag=x`, `-1`) when no space follows it.
  if (INDICATOR_START.test(text) && !/^-\S/.test(text)) defer();
  if (/:( |$)/.test(text)) defer();
  return plainScalar(text);
}

class Reader {
  private i = 0;
  constructor(private readonly lines: Line[]) {}

  read(): unknown {
    const first = this.lines[0];
    if (!first || first.indent !== 0 || isItem(first.text)) defer();
    const v = this.block(0, 1);
    if (this.i !== this.lines.length) defer();
    return v;
  }

  private block(indent: number, depth: number): unknown {
    if (depth > SIMPLE_MAX_DEPTH) defer();
    return isItem(this.lines[this.i]!.text) ? this.seq(indent, depth) : this.map(indent, depth);
  }

  /** What follows `key:` or `-` with nothing after it: a nested block, or null. */
  private nested(indent: number, depth: number, sameIndentSeq: boolean): unknown {
    const next = this.lines[this.i];
    if (next && next.indent > indent) return this.block(next.indent, depth + 1);
    if (next && sameIndentSeq && next.indent === indent && isItem(next.text)) return this.seq(indent, depth + 1);
    return null;
  }

  /** `first`: the current line's entry, when the caller has split it already (`- key: value`). */
  private map(indent: number, depth: number, first?: Entry): Record<string, unknown> {
    const o: Record<string, unknown> = {};
    for (
      let line = this.lines[this.i];
      line && line.indent === indent && !isItem(line.text);
      line = this.lines[this.i]
    ) {
      const entry = first ?? splitEntry(line.text) ?? defer();
      first = undefined;
      this.i++;
      setKey(
        o,
        entry.key,
        entry.rest === undefined ? this.nested(indent, depth, true) : this.after(inlineValue(entry.rest), indent),
      );
    }
    this.end(indent);
    return o;
  }

  private seq(indent: number, depth: number): unknown[] {
    const list: unknown[] = [];
    for (
      let line = this.lines[this.i];
      line && line.indent === indent && isItem(line.text);
      line = this.lines[this.i]
    ) {
      const rest = line.text.slice(1).trimStart();
      if (rest === '') {
        this.i++;
        list.push(this.nested(indent, depth, false));
        continue;
      }
      if (isItem(rest)) defer();
      const column = indent + (line.text.length - rest.length);
      const entry = splitEntry(rest);
      if (entry) {
        // `- key: value`: a mapping whose keys stand at the column after the dash.
        this.lines[this.i] = { indent: column, text: rest };
        list.push(this.map(column, depth + 1, entry));
        continue;
      }
      this.i++;
      list.push(this.after(inlineValue(rest), indent));
    }
    this.end(indent);
    return list;
  }

  /** After a one-line value, a deeper line would continue it (a multi-line scalar). */
  private after(value: unknown, indent: number): unknown {
    const next = this.lines[this.i];
    if (next && next.indent > indent) defer();
    return value;
  }

  private end(indent: number): void {
    const next = this.lines[this.i];
    if (next && next.indent > indent) defer();
  }
}

const isItem = (text: string): boolean => text === '-' || text.startsWith('- ');

/** The one document of `text` as plain data, or undefined when the library must read it. */
export function readSimpleYaml(text: string): { readonly value: unknown } | undefined {
  if (text.length > SIMPLE_MAX_CHARS || DEFER_CHARS.test(text)) return undefined;
  const lines: Line[] = [];
  let started = false;
  for (const raw of text.split('\n')) {
    const t = raw.trimEnd();
    if (t === '') continue;
    if (t.startsWith('---') || t.startsWith('...')) {
      if (started || t !== '---') return undefined;
      continue;
    }
    started = true;
    const indent = t.length - t.trimStart().length;
    lines.push({ indent, text: t.slice(indent) });
  }
  try {
    return { value: new Reader(lines).read() };
  } catch (err) {
    if (err instanceof Defer) return undefined;
    throw err;
  }
}
