// Columns as kubectl's tabwriter prints them: left-aligned, 3 spaces of padding, at least 6 wide.

const PADDING = 3;
const MIN_WIDTH = 6;

export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) =>
    Math.max(MIN_WIDTH, PADDING + Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length))),
  );
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('');
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
