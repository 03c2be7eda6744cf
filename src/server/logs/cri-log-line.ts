// One line of a CRI log file (`<RFC3339Nano time> <stdout|stderr> <P|F>[:tags] <content>`), parsed as
// the kubelet's parseCRILog does: a partial (P) line's trailing newline is dropped, a full (F) line
// keeps it. Times are compared and printed at nanosecond precision without Date (which has ms).

export interface CriLogLine {
  /** The timestamp text as written by the runtime. */
  readonly time: string;
  readonly stream: 'stdout' | 'stderr';
  readonly partial: boolean;
  /** The content, with its newline unless partial. A view into the input. */
  readonly content: Buffer;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;

const STDOUT = Buffer.from('stdout');
const STDERR = Buffer.from('stderr');
const P = 0x50;
const COLON = 0x3a;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/**
 * `line` includes its trailing newline when it has one. Returns undefined for a line that is not CRI
 * format. The time is only checked for its shape here (a digit first, a `T`): it is parsed when a
 * `since` filter needs it, so that plain reads stay cheap.
 */
export function parseCriLogLine(line: Buffer): CriLogLine | undefined {
  const a = line.indexOf(SPACE);
  if (a < 20 || (line[0] ?? 0) < DIGIT_0 || (line[0] ?? 0) > DIGIT_9 || line[10] !== 0x54) return undefined;
  const b = a + 7;
  if (line[b] !== SPACE) return undefined;
  const isOut = STDOUT.equals(line.subarray(a + 1, b));
  if (!isOut && !STDERR.equals(line.subarray(a + 1, b))) return undefined;
  const c = line.indexOf(SPACE, b + 1);
  if (c < 0) return undefined;
  // The first tag decides (P:more-tags is still partial).
  const partial = line[b + 1] === P && (c === b + 2 || line[b + 2] === COLON);
  let end = line.length;
  if (partial && end > c + 1 && line[end - 1] === NEWLINE) end--;
  return { time: line.toString('latin1', 0, a), stream: isOut ? 'stdout' : 'stderr', partial, content: line.subarray(c + 1, end) };
}

/** Nanoseconds since the epoch of an RFC 3339 time with up to 9 fractional digits; undefined when malformed. */
export function parseLogTime(text: string): bigint | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** The kubelet's RFC3339NanoFixed output form: always nine fractional digits, zone as written. */
export function fixedLogTime(text: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return text;
  return `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}${m[3]}`;
}
