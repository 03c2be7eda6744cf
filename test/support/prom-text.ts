// A reader of the Prometheus text exposition format (version 0.0.4), enough to check families,
// types, label names and histogram buckets of what /metrics serves.

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  type?: string;
  help?: string;
  readonly samples: Sample[];
}

function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/g;
  for (let m = re.exec(text); m; m = re.exec(text))
    out[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  return out;
}

function parseValue(v: string): number {
  if (v === '+Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  return Number(v);
}

/** Families by name; a histogram's _bucket, _sum and _count samples belong to its family. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, samples: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      if (meta[1] === 'TYPE') family(meta[2]!).type = meta[3];
      else family(meta[2]!).help = meta[3];
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const name = m[1]!;
    const base =
      [...families.keys()].find(
        (f) =>
          families.get(f)?.type === 'histogram' &&
          (name === `${f}_bucket` || name === `${f}_sum` || name === `${f}_count`),
      ) ?? name;
    family(base).samples.push({ name, labels: parseLabels(m[2] ?? ''), value: parseValue(m[3]!) });
  }
  return families;
}
