// Percentiles and the printed table of a benchmark run: each row a ratio against its baseline; a section run alone.
import { pathToFileURL } from 'node:url';

export interface Row {
  what: string;
  /** Baseline time, ms. */
  raw: number;
  /** bootlet's time, ms. */
  bootlet: number;
  /** Highest acceptable bootlet/raw ratio, if the row has a target. */
  target?: number;
  /** The ratio's spread over rounds (lowest–highest), when measured in rounds. */
  spread?: string;
}

/** The lowest and highest of per-round ratios, as "1.02–1.11". */
export function ratioSpread(raw: number[], bootlet: number[]): string {
  const ratios = raw.map((r, i) => bootlet[i]! / r);
  return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function printTable(rows: Row[]): void {
  const header = ['measurement', 'baseline ms', 'bootlet ms', 'ratio', 'rounds', 'target', ''];
  const lines = rows.map((r) => {
    const ratio = r.bootlet / r.raw;
    const verdict = r.target === undefined ? '' : ratio <= r.target ? 'ok' : 'OVER TARGET';
    return [
      r.what,
      r.raw.toFixed(1),
      r.bootlet.toFixed(1),
      ratio.toFixed(2),
      r.spread ?? '',
      r.target === undefined ? '' : `≤ ${r.target}`,
      verdict,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cols: string[]) =>
    cols.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(fmt(header));
  for (const l of lines) console.log(fmt(l));
}

/** A section's file run on its own (`npx tsx bench/<file>.ts`): runs it, prints it, exits 0, or 1 on a failure. */
export function runIfMain<T>(moduleUrl: string, run: () => Promise<T>, print: (result: T) => void): void {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? '').href) return;
  run().then(
    (result) => {
      print(result);
      process.exit(0);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
