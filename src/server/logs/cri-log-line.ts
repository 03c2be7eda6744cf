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

/** `line` includes its trailing newline when it has one. Returns undefined for a line that is not CRI format. */
export function parseCriLogLine(line: Buffer): CriLogLine | undefined {
  const a = line.indexOf(SPACE);
  if (a <= 0) return undefined;
  const b = line.indexOf(SPACE, a + 1);
  if (b < 0) return undefined;
  const stream = line.toString('latin1', a + 1, b);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  const c = line.indexOf(SPACE, b + 1);
  if (c < 0) return undefined;
  const tag = line.toString('latin1', b + 1, c);
  const partial = tag.split(':')[0] === 'P';
  let end = line.length;
  if (partial && end > c + 1 && line[end - 1] === NEWLINE) end--;
  const time = line.toString('latin1', 0, a);
  if (parseLogTime(time) === undefined) return undefined;
  return { time, stream, partial, content: line.subarray(c + 1, end) };
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
