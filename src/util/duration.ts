// Go durations ("20s", "1m30s", "100ms", "-1.5h", "0") as the kubelet's flags and config file take
// them (time.ParseDuration): a sign, then one or more decimal numbers each with a unit.

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const EXAMPLES = '(examples: 20s, 1m30s, 500ms)';

/** Parses to milliseconds; throws with the reason on a malformed value. */
export function parseDuration(text: string): number {
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw new Error(`invalid duration ${JSON.stringify(text)} ${EXAMPLES}`);
  // µ (micro sign) and μ (Greek mu) written as escapes: one non-ASCII character in the bundle makes
  // V8 hold its whole source as two-byte text (build/build.mjs refuses it).
  const re = /(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) throw new Error(`invalid duration ${JSON.stringify(text)} ${EXAMPLES}`);
    total += Number(m[1]) * (UNITS[m[2]!] ?? 0);
    pos = re.lastIndex;
  }
  return sign * total;
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** time.Duration.String() for whole milliseconds. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = (rest / 1000).toString();
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}
