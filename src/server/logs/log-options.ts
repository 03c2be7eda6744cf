// PodLogOptions as the kubelet reads them from /containerLogs' query (v1 parameter decoding, then
// ValidatePodLogOptions). Decoding failures are 400, invalid values 422, each naming the parameter.

export interface LogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  /** Lines from the end; undefined: all. */
  tailLines?: number;
  /** Stop after this many bytes of output; undefined: no limit. */
  limitBytes?: number;
  /** Only lines at or after this time (ns since the epoch); the later of sinceSeconds and sinceTime. */
  sinceNs?: bigint;
}

export class LogOptionsError extends Error {
  constructor(
    readonly statusCode: 400 | 422,
    message: string,
  ) {
    super(message);
    this.name = 'LogOptionsError';
  }
}

/** strconv.ParseBool, as the v1 query decoder uses it. */
function parseBool(name: string, v: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False', ''].includes(v)) return false;
  throw new LogOptionsError(400, `Unable to decode query: ${name}=${JSON.stringify(v)} is not a boolean`);
}

function parseInt64(name: string, v: string): number {
  if (!/^[+-]?\d{1,18}$/.test(v))
    throw new LogOptionsError(400, `Unable to decode query: ${name}=${JSON.stringify(v)} is not an integer`);
  return Number(v);
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The first value of a repeated parameter, as url.Values.Get and the v1 decoder take it. */
function first(q: URLSearchParams, name: string): string | undefined {
  return q.get(name) ?? undefined;
}

export function parseLogOptions(query: URLSearchParams, nowMs: number): LogOptions {
  const q = new URLSearchParams(query);
  // The kubelet's backwards compatibility for `tail` ("all" = no limit).
  const tail = q.get('tail');
  if (tail) {
    if (tail === 'all') q.delete('tailLines');
    else q.set('tailLines', tail);
  }
  const opts: LogOptions = {
    follow: parseBool('follow', first(q, 'follow') ?? ''),
    previous: parseBool('previous', first(q, 'previous') ?? ''),
    timestamps: parseBool('timestamps', first(q, 'timestamps') ?? ''),
  };
  const tailLines = first(q, 'tailLines');
  if (tailLines !== undefined && tailLines !== '') opts.tailLines = parseInt64('tailLines', tailLines);
  const limitBytes = first(q, 'limitBytes');
  if (limitBytes !== undefined && limitBytes !== '') opts.limitBytes = parseInt64('limitBytes', limitBytes);
  const sinceSecondsText = first(q, 'sinceSeconds');
  const sinceSeconds =
    sinceSecondsText !== undefined && sinceSecondsText !== ''
      ? parseInt64('sinceSeconds', sinceSecondsText)
      : undefined;
  const sinceTimeText = first(q, 'sinceTime');
  let sinceTimeMs: number | undefined;
  if (sinceTimeText !== undefined && sinceTimeText !== '') {
    const m = RFC3339.exec(sinceTimeText);
    const ms = m ? Date.parse(`${m[1]}T${m[2]}${m[4]}`) : NaN;
    if (Number.isNaN(ms))
      throw new LogOptionsError(
        400,
        `Unable to decode query: sinceTime=${JSON.stringify(sinceTimeText)} is not an RFC 3339 time`,
      );
    // metav1.Time has whole seconds.
    sinceTimeMs = ms;
  }

  if (opts.tailLines !== undefined && opts.tailLines < 0)
    throw new LogOptionsError(422, `tailLines: Invalid value: ${opts.tailLines}: must be greater than or equal to 0`);
  if (opts.limitBytes !== undefined && opts.limitBytes < 1)
    throw new LogOptionsError(422, `limitBytes: Invalid value: ${opts.limitBytes}: must be greater than 0`);
  if (sinceSeconds !== undefined && sinceTimeMs !== undefined)
    throw new LogOptionsError(422, 'at most one of `sinceTime` or `sinceSeconds` may be specified');
  if (sinceSeconds !== undefined && sinceSeconds < 1)
    throw new LogOptionsError(422, `sinceSeconds: Invalid value: ${sinceSeconds}: must be greater than 0`);

  if (sinceSeconds !== undefined) opts.sinceNs = BigInt(nowMs - sinceSeconds * 1000) * 1_000_000n;
  if (sinceTimeMs !== undefined) opts.sinceNs = BigInt(sinceTimeMs) * 1_000_000n;
  return opts;
}
