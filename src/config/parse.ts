// Bytes of a manifest -> one plain object that claims to be a v1 Pod, or a one-line error with the
// line and column the parser points at.
import { isScalar, parseAllDocuments, type Document, type YAMLError } from 'yaml';

export interface ParseError {
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

export type ParseResult = { readonly ok: true; readonly object: Record<string, unknown> } | { readonly ok: false; readonly error: ParseError };

/** 1-based line and column of a character offset. */
export function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

const fail = (message: string, pos?: { line: number; column: number }): ParseResult => ({
  ok: false,
  error: pos ? { message: `line ${pos.line}, column ${pos.column}: ${message}`, line: pos.line, column: pos.column } : { message },
});

/** yaml's pretty messages end with " at line L, column C:" and a source excerpt; keep the first part. */
function shortYamlMessage(message: string): string {
  const first = message.split('\n', 1)[0] ?? message;
  return first.replace(/ at line \d+, column \d+:?$/, '');
}

/**
 * Where JSON.parse failed. Node gives "at position N" for most errors but not for "Unexpected token";
 * then the failure point is the end of the longest prefix that is still the beginning of some valid
 * JSON text, which a binary search finds (prefix viability is monotone). Only runs on broken files.
 */
function jsonErrorOffset(text: string, message: string): number | undefined {
  const m = / at position (\d+)/.exec(message);
  if (m) return Number(m[1]);
  const viable = (n: number): boolean => {
    try {
      JSON.parse(text.slice(0, n));
      return true;
    } catch (err) {
      const msg = (err as Error).message;
      if (msg.startsWith('Unexpected end of JSON input')) return true;
      const p = / at position (\d+)/.exec(msg);
      return p !== null && Number(p[1]) >= n;
    }
  };
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (viable(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo < text.length ? lo : undefined;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return `a ${typeof v}`;
}

/** Checks that an object is one v1 Pod, saying what was found instead. */
function checkKind(object: unknown): ParseResult {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) {
    return fail(`expected a Pod object, found ${describe(object)}`);
  }
  const o = object as Record<string, unknown>;
  const { kind, apiVersion } = o;
  if (kind === undefined || kind === '') return fail('kind is missing: expected "Pod"');
  if (kind !== 'Pod') {
    const hint = kind === 'PodList' ? ' (a file holds exactly one Pod; a PodList is not accepted)' : '';
    return fail(`kind is ${JSON.stringify(kind)}: expected "Pod"${hint}`);
  }
  if (apiVersion === undefined || apiVersion === '') return fail('apiVersion is missing: expected "v1"');
  if (apiVersion !== 'v1') return fail(`apiVersion is ${JSON.stringify(apiVersion)}: expected "v1"`);
  return { ok: true, object: o };
}

function yamlError(text: string, e: YAMLError | undefined): ParseResult | undefined {
  if (!e) return undefined;
  const pos = e.linePos?.[0];
  return fail(shortYamlMessage(e.message), pos ? { line: pos.line, column: pos.col } : lineColumnAt(text, e.pos[0]));
}

function isEmptyDocument(d: Document.Parsed): boolean {
  const c = d.contents;
  return c === null || (isScalar(c) && c.value === null && c.source === '');
}

function parseYaml(text: string): ParseResult {
  // YAML 1.1 as the Kubernetes YAML decoder (go-yaml v2) reads it: `defaultMode: 0644` is octal 420.
  const docs = parseAllDocuments(text, { uniqueKeys: true, version: '1.1', prettyErrors: true });
  // A stream of only comments or `---` yields no documents; an empty document (a trailing `---`) is
  // not a second manifest, so it is dropped.
  const list = (Array.isArray(docs) ? docs : []).filter((d) => d.errors.length > 0 || !isEmptyDocument(d));
  const [first, second] = list;
  if (!first) return fail('file has no content');
  const err = yamlError(text, first.errors[0]);
  if (err) return err;
  if (second) {
    const pos = lineColumnAt(text, second.range[0]);
    return fail(`a second YAML document starts here; a manifest file holds exactly one Pod`, { line: pos.line, column: 1 });
  }
  let value: unknown;
  try {
    // maxAliasCount guards against alias bombs; an unresolved alias throws.
    value = first.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return fail((e as Error).message);
  }
  return checkKind(value);
}

function parseJson(text: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message;
    const offset = jsonErrorOffset(text, message);
    // Node's message may quote a slice of the file with newlines; keep the part before the quote.
    const short = message.split('\n', 1)[0]!.replace(/, ".*$/, '').replace(/ in JSON at position \d+.*$/, '');
    return fail(`invalid JSON: ${short}`, offset === undefined ? undefined : lineColumnAt(text, offset));
  }
  // JSON.parse keeps the last of duplicate keys silently; the YAML parser (JSON is YAML) finds them.
  const docs = parseAllDocuments(text, { uniqueKeys: true, version: '1.1', prettyErrors: true });
  const first = Array.isArray(docs) ? docs[0] : undefined;
  return yamlError(text, first?.errors.find((x) => x.code === 'DUPLICATE_KEY')) ?? checkKind(value);
}

export function parseManifest(bytes: Buffer | string): ParseResult {
  const text = (typeof bytes === 'string' ? bytes : bytes.toString('utf8')).replace(/^\uFEFF/, '');
  if (text.trim() === '') return fail('file is empty');
  // JSON gets the stricter JSON parser: YAML reads `"b": }` as a null value instead of refusing it.
  return /^\s*[{[]/.test(text) ? parseJson(text) : parseYaml(text);
}
