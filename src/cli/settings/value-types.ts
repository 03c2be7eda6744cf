// The kinds of value a setting holds. Each says how the kubelet reads it from a flag (pflag's value
// types: a bool flag alone means true, list and map flags accumulate over repeats) and from the
// config file (Go's JSON decoding: a number is never a string, a string never a number), and what
// its zero value is (the config file's zero means "use the default" for non-pointer fields).
import { isIP } from 'node:net';
import type { Taint } from 'kubernetes-types/core/v1';
import { parseNodeLabels, parseTaints } from './node-flags.js';
import { parseQuantity } from '../../k8s/quantity.js';
import { formatDuration, parseDuration } from '../../util/duration.js';

export interface ValueType<T> {
  /** In words, for --help and the README ("duration", "IP", "list of strings"). */
  readonly kind: string;
  readonly placeholder: string;
  /** pflag's NoOptDefVal "true": `--flag` alone sets true; `--flag false` is not a value. */
  readonly isBool?: boolean;
  /** One occurrence on the command line; `prev` is what earlier occurrences gave. Throws the reason. */
  fromFlag(text: string, prev: T | undefined): T;
  /** The value the config file holds (decoded YAML/JSON). Throws the reason. */
  fromConfig(value: unknown): T;
  isZero(value: T): boolean;
  format(value: T): string;
}

const describeValue = (v: unknown): string =>
  Array.isArray(v)
    ? 'a list'
    : v === null
      ? 'null'
      : typeof v === 'object'
        ? 'an object'
        : `${typeof v} ${JSON.stringify(v)}`;

function must(cond: boolean, what: string, v: unknown): void {
  if (!cond) throw new Error(`must be ${what}, not ${describeValue(v)}`);
}

export const str: ValueType<string> = {
  kind: 'string',
  placeholder: 'string',
  fromFlag: (text) => text,
  fromConfig(v) {
    must(typeof v === 'string', 'a string', v);
    return v as string;
  },
  isZero: (v) => v === '',
  format: (v) => (v === '' ? '""' : v),
};

/** A path: like a string, but the kubelet resolves a relative one in the config file against the file's directory. */
export const path: ValueType<string> = { ...str, kind: 'path', placeholder: 'path' };

/** strconv.ParseBool, which pflag's bool flags use. */
function parseGoBool(text: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  throw new Error('must be true or false');
}

export const bool: ValueType<boolean> = {
  kind: 'bool',
  placeholder: '',
  isBool: true,
  fromFlag: (text) => parseGoBool(text),
  fromConfig(v) {
    must(typeof v === 'boolean', 'true or false', v);
    return v as boolean;
  },
  isZero: (v) => !v,
  format: (v) => String(v),
};

/** strconv.ParseInt(text, 0, bits): decimal, or 0x / 0o / 0b / leading-0 octal as Go reads them. */
function parseGoInt(text: string): number {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO]?[0-7_]+|0[bB][01_]+|[1-9][0-9]*|0)$/.exec(text);
  if (!m) throw new Error('must be an integer');
  let digits = m[2]!.replace(/_/g, '');
  let radix = 10;
  if (/^0[xX]/.test(digits)) [radix, digits] = [16, digits.slice(2)];
  else if (/^0[bB]/.test(digits)) [radix, digits] = [2, digits.slice(2)];
  else if (/^0[oO]/.test(digits)) [radix, digits] = [8, digits.slice(2)];
  else if (digits.length > 1 && digits.startsWith('0')) radix = 8;
  const n = parseInt(digits, radix);
  return m[1] === '-' ? -n : n;
}

function intType(bits: 32 | 64, unsigned = false): ValueType<number> {
  const max = bits === 32 ? (unsigned ? 2 ** 32 - 1 : 2 ** 31 - 1) : Number.MAX_SAFE_INTEGER;
  const min = unsigned ? 0 : bits === 32 ? -(2 ** 31) : Number.MIN_SAFE_INTEGER;
  const inRange = (n: number): number => {
    if (n < min || n > max) throw new Error(`is out of range (${unsigned ? 'uint' : 'int'}${bits})`);
    return n;
  };
  return {
    kind: 'integer',
    placeholder: unsigned ? 'uint' : bits === 32 ? 'int32' : 'int',
    fromFlag: (text) => inRange(parseGoInt(text)),
    fromConfig(v) {
      must(typeof v === 'number' && Number.isInteger(v), 'an integer', v);
      return inRange(v as number);
    },
    isZero: (v) => v === 0,
    format: (v) => String(v),
  };
}

export const int32 = intType(32);
export const int64 = intType(64);
export const uint32 = intType(32, true);

/** []int32 (a list of numbers in the file; `1,2` on a command line, repeats append). */
export const int32List: ValueType<number[]> = {
  kind: 'list of integers',
  placeholder: 'int32s',
  fromFlag: (text, prev) => [...(prev ?? []), ...text.split(',').map((t) => int32.fromFlag(t.trim(), undefined))],
  fromConfig(v) {
    must(Array.isArray(v), 'a list of integers', v);
    return (v as unknown[]).map((x) => int32.fromConfig(x));
  },
  isZero: (v) => v.length === 0,
  format: (v) => (v.length === 0 ? '[]' : v.join(',')),
};

export const float64: ValueType<number> = {
  kind: 'number',
  placeholder: 'float',
  fromFlag(text) {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new Error('must be a number');
    return n;
  },
  fromConfig(v) {
    must(typeof v === 'number', 'a number', v);
    return v as number;
  },
  isZero: (v) => v === 0,
  format: (v) => String(v),
};

/** metav1.Duration, held in milliseconds. */
export const duration: ValueType<number> = {
  kind: 'duration',
  placeholder: 'duration',
  fromFlag: (text) => parseDuration(text),
  fromConfig(v) {
    must(typeof v === 'string', 'a duration string such as "20s"', v);
    return parseDuration(v as string);
  },
  isZero: (v) => v === 0,
  format: (v) => formatDuration(v),
};

/** logging.flushFrequency (TimeOrMetaDuration): a duration string or a number of nanoseconds. */
export const timeOrMetaDuration: ValueType<number> = {
  ...duration,
  fromConfig(v) {
    if (typeof v === 'number' && Number.isInteger(v)) return v / 1e6;
    must(typeof v === 'string', 'a duration string or a number of nanoseconds', v);
    return parseDuration(v as string);
  },
};

export const ip: ValueType<string> = {
  kind: 'IP',
  placeholder: 'ip',
  fromFlag(text) {
    if (isIP(text) === 0) throw new Error('is not a valid IP address');
    return text;
  },
  fromConfig(v) {
    must(typeof v === 'string', 'a string', v);
    if (v !== '' && isIP(v as string) === 0) throw new Error(`${JSON.stringify(v)} is not a valid IP address`);
    return v as string;
  },
  isZero: (v) => v === '',
  format: (v) => v,
};

/** A Kubernetes quantity held as the text the kubelet parses later (containerLogMaxSize: string). */
export const quantityString: ValueType<string> = {
  ...str,
  kind: 'quantity',
  placeholder: 'quantity',
  fromFlag(text) {
    checkQuantity(text);
    return text;
  },
  fromConfig(v) {
    must(typeof v === 'string', 'a quantity string such as "10Mi"', v);
    if (v !== '') checkQuantity(v as string);
    return v as string;
  },
};

/** A quantity string in the file (containerLogMaxSize: "10Mi"), held as bytes. */
export const quantityBytes: ValueType<number> = {
  kind: 'quantity',
  placeholder: 'quantity',
  fromFlag: (text) => bytesOf(text),
  fromConfig(v) {
    must(typeof v === 'string', 'a quantity string such as "10Mi"', v);
    return v === '' ? 0 : bytesOf(v as string);
  },
  isZero: (v) => v === 0,
  format: (v) =>
    v % 1048576 === 0 && v > 0 ? `${v / 1048576}Mi` : v % 1024 === 0 && v > 0 ? `${v / 1024}Ki` : String(v),
};

function bytesOf(text: string): number {
  checkQuantity(text);
  return parseQuantity(text).value();
}

/** resource.QuantityValue (logging.options.*.infoBufferSize): a quantity string or a number. */
export const quantityValue: ValueType<string> = {
  ...quantityString,
  fromConfig(v) {
    if (typeof v === 'number') return String(v);
    return quantityString.fromConfig(v);
  },
  isZero: (v) => v === '' || v === '0',
};

function checkQuantity(text: string): void {
  try {
    parseQuantity(text);
  } catch {
    throw new Error(`${JSON.stringify(text)} is not a valid quantity (e.g. 10Mi)`);
  }
}

/** Splits one CSV record as pflag's StringSlice does (encoding/csv: quotes may hold commas). */
function splitCsv(text: string): string[] {
  if (text === '') return [];
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') ((cur += '"'), i++);
      else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"' && cur === '') quoted = true;
    else if (c === ',') (out.push(cur), (cur = ''));
    else cur += c;
  }
  if (quoted) throw new Error('has an unterminated quote');
  out.push(cur);
  return out;
}

/** []string: a flag's first use replaces the default, each later use appends (pflag StringSlice). */
export const stringList: ValueType<string[]> = {
  kind: 'list of strings',
  placeholder: 'strings',
  fromFlag: (text, prev) => [...(prev ?? []), ...splitCsv(text)],
  fromConfig(v) {
    must(Array.isArray(v) && v.every((s) => typeof s === 'string'), 'a list of strings', v);
    return v as string[];
  },
  isZero: (v) => v.length === 0,
  format: (v) => (v.length === 0 ? '[]' : v.join(',')),
};

/** map[string]string: `k=v,k2=v2` (or `k<v` for eviction thresholds); repeats add keys. */
export function stringMap(sep: '=' | '<'): ValueType<Record<string, string>> {
  return {
    kind: 'map',
    placeholder: sep === '=' ? 'k=v,...' : 'signal<quantity,...',
    fromFlag(text, prev) {
      const out = { ...(prev ?? {}) };
      for (const pair of text.split(',')) {
        const p = pair.trim();
        if (p === '') continue;
        const i = p.indexOf(sep);
        if (i < 0) throw new Error(`malformed pair ${JSON.stringify(p)}, expect string${sep}string`);
        out[p.slice(0, i).trim()] = p.slice(i + 1).trim();
      }
      return out;
    },
    fromConfig(v) {
      must(isPlainObject(v) && Object.values(v).every((x) => typeof x === 'string'), 'a map of strings', v);
      return v as Record<string, string>;
    },
    isZero: (v) => Object.keys(v).length === 0,
    format: (v) =>
      Object.entries(v)
        .map(([k, x]) => `${k}${sep}${x}`)
        .join(',') || '{}',
  };
}

/** map[string]bool (--feature-gates A=true,B=false); repeats add keys. */
export const boolMap: ValueType<Record<string, boolean>> = {
  kind: 'map of bools',
  placeholder: 'Name=true|false,...',
  fromFlag(text, prev) {
    const out = { ...(prev ?? {}) };
    for (const pair of text.split(',')) {
      const p = pair.trim();
      if (p === '') continue;
      const i = p.indexOf('=');
      if (i < 0) throw new Error(`missing bool value for ${p}`);
      const k = p.slice(0, i).trim();
      try {
        out[k] = parseGoBool(p.slice(i + 1).trim());
      } catch {
        throw new Error(`invalid value of ${k}=${p.slice(i + 1)}, err: must be true or false`);
      }
    }
    return out;
  },
  fromConfig(v) {
    must(
      isPlainObject(v) && Object.values(v).every((x) => typeof x === 'boolean'),
      'a map of names to true or false',
      v,
    );
    return v as Record<string, boolean>;
  },
  isZero: (v) => Object.keys(v).length === 0,
  format: (v) =>
    Object.entries(v)
      .map(([k, x]) => `${k}=${x}`)
      .join(',') || '{}',
};

/** --node-labels (flag only): repeats add labels; the kubelet's rules on which labels a node may set. */
export const nodeLabels: ValueType<Record<string, string>> = {
  kind: 'map',
  placeholder: 'k=v,...',
  fromFlag: (text, prev) => ({ ...(prev ?? {}), ...parseNodeLabels(text) }),
  fromConfig() {
    throw new Error('is a flag only');
  },
  isZero: (v) => Object.keys(v).length === 0,
  format: (v) =>
    Object.entries(v)
      .map(([k, x]) => `${k}=${x}`)
      .join(',') || '{}',
};

const EFFECTS = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);

/** []v1.Taint: `k=v:Effect,...` on the command line (a repeat replaces), taint objects in the file. */
export const taints: ValueType<Taint[]> = {
  kind: 'list of taints',
  placeholder: 'k=v:Effect,...',
  fromFlag: (text) => parseTaints(text),
  fromConfig(v) {
    must(Array.isArray(v), 'a list of taints', v);
    return (v as unknown[]).map((t, i) => {
      const o = t as Partial<Taint> & { timeAdded?: unknown };
      if (!isPlainObject(t) || typeof o.key !== 'string' || !o.key || !EFFECTS.has(String(o.effect))) {
        throw new Error(`[${i}] needs a key and an effect (NoSchedule, PreferNoSchedule or NoExecute)`);
      }
      if (o.value !== undefined && o.value !== null && typeof o.value !== 'string')
        throw new Error(`[${i}].value must be a string`);
      if (o.timeAdded !== undefined && o.timeAdded !== null) throw new Error(`[${i}]: timeAdded must not be set`);
      return {
        key: o.key,
        effect: o.effect as string,
        ...(typeof o.value === 'string' && o.value !== '' ? { value: o.value } : {}),
      };
    });
  },
  isZero: (v) => v.length === 0,
  format: (v) => v.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(',') || '[]',
};

/**
 * staticPodURLHeader (map[string][]string): `Name:value,Name2:value` on the command line, repeats
 * adding values in order (--manifest-url-header); a map of names to lists of values in the file.
 */
export const headerMap: ValueType<Record<string, string[]>> = {
  kind: 'HTTP headers',
  placeholder: 'Name:value,...',
  fromFlag(text, prev) {
    const out: Record<string, string[]> = Object.fromEntries(Object.entries(prev ?? {}).map(([k, v]) => [k, [...v]]));
    for (const pair of text.split(',')) {
      if (pair.trim() === '') continue;
      const i = pair.indexOf(':');
      if (i <= 0) throw new Error(`malformed header ${JSON.stringify(pair)}, expect Name:value`);
      const name = pair.slice(0, i).trim();
      (out[name] ??= []).push(pair.slice(i + 1).trim());
    }
    return out;
  },
  fromConfig(v) {
    must(
      isPlainObject(v) && Object.values(v).every((x) => Array.isArray(x) && x.every((s) => typeof s === 'string')),
      'a map of header names to lists of strings',
      v,
    );
    return v as Record<string, string[]>;
  },
  isZero: (v) => Object.keys(v).length === 0,
  format: (v) =>
    Object.entries(v)
      .flatMap(([k, xs]) => xs.map((x) => `${k}:${x}`))
      .join(',') || '{}',
};

/**
 * A value bootlet only needs to recognise (it does not implement the setting): any JSON in the
 * file; on the command line the texts given, in order.
 */
export const opaque: ValueType<unknown> = {
  kind: 'value',
  placeholder: 'value',
  fromFlag: (text, prev) => [...((prev as string[] | undefined) ?? []), text],
  fromConfig: (v) => v,
  isZero: (v) =>
    v === null ||
    v === undefined ||
    (Array.isArray(v) && v.length === 0) ||
    (isPlainObject(v) && Object.keys(v).length === 0),
  format: (v) => JSON.stringify(v) ?? '',
};

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep equality of decoded values (to tell a value from its default). */
export function sameValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isPlainObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'undefined';
}
