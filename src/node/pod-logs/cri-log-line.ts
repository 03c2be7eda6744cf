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
const STDOUT = Buffer.from('stdout');
const STDERR = Buffer.from('stderr');
const P = 0x50;
const COLON = 0x3a;
/** The longest time worth looking at (nine fraction digits and an offset are 35 characters). */
const MAX_TIME = 64;

/** RFC3339Nano as Go's time.Parse takes it: a fraction of any length after `.` or `,`, `Z` or an offset. */
const TIME = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:[.,](\d+))?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

interface TimeParts {
  /** `YYYY-MM-DDTHH:MM:SS` */
  readonly seconds: string;
  /** Nine digits (more are cut, as Go does). */
  readonly nanos: string;
  readonly zone: string;
}

function timeParts(text: string): TimeParts | undefined {
  const m = TIME.exec(text);
  if (!m) return undefined;
  const day = Number(m[3]);
  if (day > 28 && day > daysInMonth(Number(m[1]), Number(m[2]))) return undefined;
  return { seconds: text.slice(0, 19), nanos: (m[7] ?? '').slice(0, 9).padEnd(9, '0'), zone: m[8]! };
}

/**
 * `line` includes its trailing newline when it has one. Returns undefined for a line that is not in the
 * CRI format.
 */
export function parseCriLogLine(line: Buffer): CriLogLine | undefined {
  const a = line.indexOf(SPACE);
  if (a < 0 || a > MAX_TIME) return undefined;
  const time = line.toString('latin1', 0, a);
  if (!timeParts(time)) return undefined;
  const b = line.indexOf(SPACE, a + 1);
  if (b < 0) return undefined;
  const streamBytes = line.subarray(a + 1, b);
  const isOut = STDOUT.equals(streamBytes);
  if (!isOut && !STDERR.equals(streamBytes)) return undefined;
  const c = line.indexOf(SPACE, b + 1);
  if (c < 0) return undefined;
  const partial = line[b + 1] === P && (c === b + 2 || line[b + 2] === COLON);
  let end = line.length;
  if (partial && line[end - 1] === NEWLINE) end--;
  return { time, stream: isOut ? 'stdout' : 'stderr', partial, content: line.subarray(c + 1, Math.max(c + 1, end)) };
}

/** Nanoseconds since the epoch of a CRI log time; undefined when malformed. */
export function parseLogTime(text: string): bigint | undefined {
  const t = timeParts(text);
  if (!t) return undefined;
  const ms = Date.parse(`${t.seconds}${t.zone}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt(t.nanos);
}

/**
 * The kubelet's RFC3339NanoFixed output form: always nine fractional digits, the offset as written
 * (Go prints a zero offset as `Z`). Text that is not a log time is returned as it is.
 */
export function fixedLogTime(text: string): string {
  const t = timeParts(text);
  if (!t) return text;
  const zone = t.zone === '+00:00' || t.zone === '-00:00' ? 'Z' : t.zone;
  return `${t.seconds}.${t.nanos}${zone}`;
}
