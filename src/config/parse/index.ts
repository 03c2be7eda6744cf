// Bytes of a manifest -> one plain object that claims to be a v1 Pod, or a one-line error with the
// line and column of the problem. Every cost is bounded (see limits.ts); nothing here quotes the
// file's content back into a message, since manifests often hold credentials.
import { LimitError } from './limits';
import { JsonSyntaxError, readJson } from './json';
import { lineColumnAt, type Position } from './position';
import { YamlSyntaxError, readYaml } from './yaml';

export interface ParseError {
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
  /** Set when the file was refused for crossing one of the limits in limits.ts. */
  readonly limit?: true;
}

export type ParseResult =
  { readonly ok: true; readonly object: Record<string, unknown> } | { readonly ok: false; readonly error: ParseError };

const fail = (message: string, pos?: Position): ParseResult => ({
  ok: false,
  error: pos
    ? { message: `line ${pos.line}, column ${pos.column}: ${message}`, line: pos.line, column: pos.column }
    : { message },
});

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return `a ${typeof v}`;
}

/** Checks that an object is one v1 Pod (or, when `lists`, a v1 PodList), saying what was found instead. */
function checkKind(object: unknown, lists = false): ParseResult {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) {
    return fail(`expected a Pod object, found ${describe(object)}`);
  }
  const o = object as Record<string, unknown>;
  const { kind, apiVersion } = o;
  if (kind === undefined || kind === '' || kind === null) return fail('kind is missing: expected "Pod"');
  if (lists && kind === 'PodList') {
    if (apiVersion !== 'v1') return fail(`apiVersion is ${JSON.stringify(apiVersion ?? null)}: expected "v1"`);
    if (o.items !== undefined && o.items !== null && !Array.isArray(o.items)) return fail('items: must be a list');
    return { ok: true, object: o };
  }
  if (kind !== 'Pod') {
    const hint = kind === 'PodList' ? ' (a file holds exactly one Pod; a PodList is not accepted)' : '';
    return fail(`kind is ${JSON.stringify(kind)}: expected "Pod"${hint}`);
  }
  if (apiVersion === undefined || apiVersion === '' || apiVersion === null)
    return fail('apiVersion is missing: expected "v1"');
  if (apiVersion !== 'v1') return fail(`apiVersion is ${JSON.stringify(apiVersion)}: expected "v1"`);
  return { ok: true, object: o };
}

/** @param lists accept a v1 PodList too (the HTTP source does; a manifest file holds one Pod). */
export function parseManifest(bytes: Buffer | string, lists = false): ParseResult {
  const text = (typeof bytes === 'string' ? bytes : bytes.toString('utf8')).replace(/^\uFEFF/, '');
  if (text.trim() === '') return fail('file is empty');
  try {
    // JSON gets the stricter JSON reader: YAML reads `"b": }` as a null value instead of refusing it.
    if (/^\s*[{[]/.test(text)) return checkKind(readJson(text), lists);
    const r = readYaml(text);
    return 'empty' in r ? fail('file has no content') : checkKind(r.value, lists);
  } catch (err) {
    // The message says why; "refused" is the caller's verdict (the log line, `bootlet validate`).
    if (err instanceof LimitError) return { ok: false, error: { message: err.message, limit: true } };
    if (err instanceof JsonSyntaxError) return fail(`invalid JSON: ${err.message}`, lineColumnAt(text, err.offset));
    if (err instanceof YamlSyntaxError) {
      const pos = lineColumnAt(text, err.offset);
      return fail(err.message, err.message.startsWith('a second YAML document') ? { line: pos.line, column: 1 } : pos);
    }
    // A bug in a parser must not take the agent down; the file is refused and the reason kept.
    return fail(`could not parse: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
  }
}
