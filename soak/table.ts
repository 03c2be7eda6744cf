// The one table `npm run soak` prints: every figure a measurement, each with its target and verdict.
// Counts (duplicates, orphans, lost pods, crashes, restarts caused) gate the run; times, memory and
// descriptors are reported against their targets but never fail it, so that a slow machine is not
// a red build.

export interface Figure {
  readonly scenario: string;
  readonly what: string;
  readonly value: string;
  readonly target: string;
  /** undefined: nothing to judge (a series, a setting). */
  readonly ok: boolean | undefined;
  /** A failed gating figure makes the run exit non-zero. */
  readonly gating: boolean;
}

export class Figures {
  readonly rows: Figure[] = [];

  constructor(private readonly scenario: string) {}

  /** A count whose target is at most `max` (usually 0); gating. */
  count(what: string, n: number, max = 0): void {
    this.rows.push({
      scenario: this.scenario,
      what,
      value: String(n),
      target: max === 0 ? '0' : `≤ ${max}`,
      ok: n <= max,
      gating: true,
    });
  }

  /** A count that must reach `min` (e.g. hostile files refused); gating. */
  atLeast(what: string, n: number, min: number): void {
    this.rows.push({ scenario: this.scenario, what, value: String(n), target: `≥ ${min}`, ok: n >= min, gating: true });
  }

  /** Times in ms: p50 / p95 / max, judged on the max against `targetMs` when given; never gating. */
  times(what: string, ms: readonly number[], targetMs?: number): void {
    const value =
      ms.length === 0
        ? 'n/a'
        : `p50 ${fmtMs(percentile(ms, 50))} · p95 ${fmtMs(percentile(ms, 95))} · max ${fmtMs(Math.max(...ms))}`;
    const ok = targetMs === undefined || ms.length === 0 ? undefined : Math.max(...ms) <= targetMs;
    this.rows.push({
      scenario: this.scenario,
      what,
      value,
      target: targetMs === undefined ? '' : `≤ ${fmtMs(targetMs)}`,
      ok,
      gating: false,
    });
  }

  /** One time in ms. */
  time(what: string, ms: number | undefined, targetMs?: number): void {
    const ok = targetMs === undefined || ms === undefined ? undefined : ms <= targetMs;
    this.rows.push({
      scenario: this.scenario,
      what,
      value: ms === undefined ? 'n/a' : fmtMs(ms),
      target: targetMs === undefined ? '' : `≤ ${fmtMs(targetMs)}`,
      ok,
      gating: false,
    });
  }

  /** A measured value with a free-form target; never gating. */
  value(what: string, value: string, target = '', ok?: boolean): void {
    this.rows.push({ scenario: this.scenario, what, value, target, ok, gating: false });
  }
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 10_000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

export function fmtMiB(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

function verdict(f: Figure): string {
  if (f.ok === undefined) return '';
  if (f.ok) return 'ok';
  return f.gating ? 'FAIL' : 'over';
}

/** Prints the table; returns the gating figures that failed. */
export function printTable(rows: readonly Figure[], out: (line: string) => void = console.log): Figure[] {
  const header = ['scenario', 'figure', 'measured', 'target', ''];
  const cells = rows.map((r) => [r.scenario, r.what, r.value, r.target, verdict(r)]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(' | ')} |`;
  out(line(header));
  out(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  let last = '';
  for (const c of cells) {
    out(line([c[0] === last ? '' : c[0]!, ...c.slice(1)]));
    last = c[0]!;
  }
  return rows.filter((r) => r.gating && r.ok === false);
}
