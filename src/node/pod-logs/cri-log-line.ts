// One line of a container log file in the CRI format (`<RFC3339Nano time> <stdout|stderr> <tag>[:tags] <content>`),
// parsed as the kubelet's parseCRILog does:
// - the time must parse (RFC3339, fraction optional), the stream is stdout or stderr, a space ends the tags;
// - only the first tag counts: `P` is a partial line that the next one continues, anything else is full
//   (`F` today; unknown tags stay readable, as the kubelet keeps it forward compatible);
// - a partial line's trailing newline is dropped, a full line keeps its own, and a line with no newline
//   (the unfinished end of a file) gets none added.
// A line that is not in the format is undefined; each caller decides what to do with it.
// Times are compared and printed at nanosecond precision without Date (which has ms).

export interface CriLogLine {
  /** The timestamp text as written by the runtime. */
  readonly time: string;
  readonly stream: 'stdout' | 'stderr';
  readonly partial: boolean;
  /** The content, with its newline unless partial or the line had none. A view into the input. */
  readonly content: Buffer;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;
const P = 0x50;
const COLON = 0x3a;
/** The longest time worth looking at (nine fraction digits and an offset are 35 characters). */
const MAX_TIME = 64;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The number in t[i, i+n) when all are digits, else -1. */
function num(t: Uint8Array, i: number, n: number): number {
  let v = 0;
  for (let k = i; k < i + n; k++) {
    const d = (t[k] ?? 0) - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

interface TimeShape {
  /** Where the fraction's digits are (empty when there is none); the zone follows them. */
  readonly fracStart: number;
  readonly fracEnd: number;
}

/**
 * t[0, end) as RFC3339Nano as Go's time.Parse takes it: `YYYY-MM-DDTHH:MM:SS`, a fraction of any
 * length after `.` or `,`, then `Z` or `±HH:MM`, every field in its range. Scanned by hand on the
 * bytes: it runs for every line.
 */
function timeShape(t: Uint8Array, end: number): TimeShape | undefined {
  if (end < 20 || t[4] !== 0x2d || t[7] !== 0x2d || t[10] !== 0x54 || t[13] !== COLON || t[16] !== COLON)
    return undefined;
  const year = num(t, 0, 4);
  const month = num(t, 5, 2);
  const day = num(t, 8, 2);
  const hour = num(t, 11, 2);
  const minute = num(t, 14, 2);
  const second = num(t, 17, 2);
  if (
    year < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 59
  )
    return undefined;
  if (day > 28 && day > daysInMonth(year, month)) return undefined;
  let i = 19;
  let fracStart = i;
  if (t[i] === 0x2e || t[i] === 0x2c) {
    fracStart = ++i;
    while (i < end && num(t, i, 1) >= 0) i++;
    if (i === fracStart) return undefined;
  }
  const fracEnd = i;
  if (t[i] === 0x5a) return i + 1 === end ? { fracStart, fracEnd } : undefined;
  if ((t[i] !== 0x2b && t[i] !== 0x2d) || i + 6 !== end || t[i + 3] !== COLON) return undefined;
  const zh = num(t, i + 1, 2);
  const zm = num(t, i + 4, 2);
  return zh >= 0 && zh <= 23 && zm >= 0 && zm <= 59 ? { fracStart, fracEnd } : undefined;
}

function textTimeShape(text: string): TimeShape | undefined {
  return text.length > MAX_TIME ? undefined : timeShape(Buffer.from(text, 'latin1'), text.length);
}

/** `stdout` or `stderr` at line[from, to). */
function streamAt(line: Buffer, from: number, to: number): 'stdout' | 'stderr' | undefined {
  if (to - from !== 6 || line[from] !== 0x73 || line[from + 1] !== 0x74 || line[from + 2] !== 0x64) return undefined;
  const x = line[from + 3];
  const y = line[from + 4];
  const z = line[from + 5];
  if (x === 0x6f && y === 0x75 && z === 0x74) return 'stdout';
  if (x === 0x65 && y === 0x72 && z === 0x72) return 'stderr';
  return undefined;
}

/** The time is made a string only when it is asked for: most reads never look at it. */
class ParsedLine implements CriLogLine {
  private text: string | undefined;
  constructor(
    private readonly line: Buffer,
    private readonly timeEnd: number,
    readonly stream: 'stdout' | 'stderr',
    readonly partial: boolean,
    readonly content: Buffer,
  ) {}

  get time(): string {
    return (this.text ??= this.line.toString('latin1', 0, this.timeEnd));
  }
}

/**
 * `line` includes its trailing newline when it has one. Returns undefined for a line that is not in the
 * CRI format. The result is a view into `line`: use it before that buffer is reused.
 */
export function parseCriLogLine(line: Buffer): CriLogLine | undefined {
  const a = line.indexOf(SPACE);
  if (a < 20 || a > MAX_TIME || !timeShape(line, a)) return undefined;
  const b = line.indexOf(SPACE, a + 1);
  if (b < 0) return undefined;
  const stream = streamAt(line, a + 1, b);
  if (!stream) return undefined;
  const c = line.indexOf(SPACE, b + 1);
  if (c < 0) return undefined;
  const partial = line[b + 1] === P && (c === b + 2 || line[b + 2] === COLON);
  let end = line.length;
  if (partial && line[end - 1] === NEWLINE) end--;
  return new ParsedLine(line, a, stream, partial, line.subarray(c + 1, Math.max(c + 1, end)));
}

/** Nanoseconds since the epoch of a CRI log time; undefined when malformed. */
export function parseLogTime(text: string): bigint | undefined {
  const t = textTimeShape(text);
  if (!t) return undefined;
  const ms = Date.parse(`${text.slice(0, 19)}${text.slice(t.fracEnd)}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt(text.slice(t.fracStart, t.fracEnd).slice(0, 9).padEnd(9, '0'));
}

/**
 * The kubelet's RFC3339NanoFixed output form: always nine fractional digits (more are cut, as Go
 * does), the offset as written (Go prints a zero offset as `Z`). Text that is not a log time is
 * returned as it is.
 */
export function fixedLogTime(text: string): string {
  const t = textTimeShape(text);
  if (!t) return text;
  const zone = text.slice(t.fracEnd);
  const utc = zone === '+00:00' || zone === '-00:00';
  // The runtime's usual form already is the fixed one.
  if (t.fracEnd - t.fracStart === 9 && text.charCodeAt(19) === 0x2e && !utc) return text;
  return `${text.slice(0, 19)}.${text.slice(t.fracStart, t.fracEnd).slice(0, 9).padEnd(9, '0')}${utc ? 'Z' : zone}`;
}
