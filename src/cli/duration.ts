// Go-style durations ("20s", "1m30s", "100ms", "0") as the kubelet's flags and config file take them.

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses to milliseconds; throws with the reason on a malformed value. */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) throw new Error(`invalid duration "${text}" (examples: 20s, 1m30s, 500ms)`);
    total += Number(m[1]) * (UNITS[m[2]] ?? 0);
    pos = re.lastIndex;
  }
  if (s.length === 0) throw new Error('invalid duration "" (examples: 20s, 1m30s, 500ms)');
  return total;
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
