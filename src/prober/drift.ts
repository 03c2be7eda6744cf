// How late probes run: for each scheduled tick, the time between when it was due and when its
// timer actually fired. Kept in a bounded window so a long-running agent does not grow.
import type { DriftStats } from './types.js';

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export class DriftRecorder {
  private readonly samples: number[] = [];
  private next = 0;
  private total = 0;

  constructor(private readonly capacity = 10_000) {}

  record(scheduledMs: number, actualMs: number): void {
    const d = Math.max(0, actualMs - scheduledMs);
    if (this.samples.length < this.capacity) this.samples.push(d);
    else this.samples[this.next] = d;
    this.next = (this.next + 1) % this.capacity;
    this.total++;
  }

  reset(): void {
    this.samples.length = 0;
    this.next = 0;
    this.total = 0;
  }

  stats(): DriftStats {
    const sorted = [...this.samples].sort((a, b) => a - b);
    return {
      count: this.total,
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
      maxMs: sorted.length ? sorted[sorted.length - 1]! : 0,
    };
  }
}
