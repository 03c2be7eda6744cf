// Validation errors worded as the API server words them (apimachinery's field.Error): the field
// path, the error type, the bad value printed as Go prints it (strings with %q), then the detail.
import { formatPath, type PathPart } from '../field-path';

const GO_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};
/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** A string as Go's strconv.Quote (`%q`) writes it: a NUL is "\x00", a newline "\n". */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const esc = GO_ESCAPES[ch];
    if (esc !== undefined) out += esc;
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x80) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return out + '"';
}

/** A value Go prints through its String method (a resource name, a Quantity): as it is, unquoted. */
export class GoStringer {
  constructor(readonly text: string) {}
}
export const stringer = (text: string): GoStringer => new GoStringer(text);

/** A []string as field.Error prints it (Go's %#v). */
export const goStrings = (list: readonly string[]): GoStringer =>
  stringer(`[]string{${list.map((s) => goQuote(s)).join(', ')}}`);

/**
 * A struct the API server hands to field.Invalid (it prints it with %#v, its pointer fields as
 * memory addresses, which cannot be reproduced): the Go type, then the fields as JSON.
 */
export const goStruct = (type: string, value: unknown): GoStringer => stringer(`${type}${JSON.stringify(value ?? {})}`);

/** A bad value as field.Error prints it: strings quoted, numbers and booleans plain. */
export function goValue(v: unknown): string {
  if (v instanceof GoStringer) return v.text;
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'null';
  return JSON.stringify(v);
}

export const required = (p: readonly PathPart[], detail?: string): string =>
  `${formatPath(p)}: Required value${detail ? `: ${detail}` : ''}`;
export const invalid = (p: readonly PathPart[], v: unknown, detail: string): string =>
  `${formatPath(p)}: Invalid value: ${goValue(v)}: ${detail}`;
export const duplicate = (p: readonly PathPart[], v: unknown): string =>
  `${formatPath(p)}: Duplicate value: ${goValue(v)}`;
export const notFound = (p: readonly PathPart[], v: unknown): string => `${formatPath(p)}: Not found: ${goValue(v)}`;
export const forbidden = (p: readonly PathPart[], detail: string): string => `${formatPath(p)}: Forbidden: ${detail}`;
export const tooLong = (p: readonly PathPart[], maxBytes: number): string =>
  `${formatPath(p)}: Too long: must have at most ${maxBytes} bytes`;
/** field.TooMany: a list longer than it may be, with its length as the bad value. */
export const tooMany = (p: readonly PathPart[], actual: number, max: number): string =>
  `${formatPath(p)}: Too many: ${actual}: must have at most ${max} ${max === 1 ? 'item' : 'items'}`;
export const unsupported = (p: readonly PathPart[], v: unknown, ok: readonly string[]): string =>
  `${formatPath(p)}: Unsupported value: ${goValue(v)}: supported values: ${ok.map((s) => goQuote(s)).join(', ')}`;
