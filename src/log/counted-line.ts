// One log line for an event that may repeat without end (a refused connection, an ignored signal):
// the first is logged at once; the ones that follow within the interval are counted, and the count
// is told in one more line when the interval is over. A flood of refusals is one line a minute.
import type { LogFields, Logger } from './logger.js';

export interface CountedLineOptions {
  readonly severity?: 'info' | 'warn';
  readonly intervalMs?: number;
  readonly now?: () => number;
}

export class CountedLine {
  private lastLineAt: number | undefined;
  private counted = 0;
  private latest: LogFields = {};
  private timer: NodeJS.Timeout | undefined;
  private readonly severity: 'info' | 'warn';
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly logger: Logger,
    private readonly msg: string,
    o: CountedLineOptions = {},
  ) {
    this.severity = o.severity ?? 'warn';
    this.intervalMs = o.intervalMs ?? 60_000;
    this.now = o.now ?? Date.now;
  }

  /** One more occurrence; `fields` describe it (the latest is what a count line shows). */
  hit(fields: LogFields = {}): void {
    const t = this.now();
    if (this.lastLineAt === undefined || t - this.lastLineAt >= this.intervalMs) {
      this.write(fields, t);
      return;
    }
    this.counted++;
    this.latest = fields;
    // The count is told when the interval ends even if nothing more happens; the timer keeps nothing alive.
    this.timer ??= setTimeout(() => this.flush(), this.lastLineAt + this.intervalMs - t);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    if (this.counted > 0) this.write(this.latest, this.now());
  }

  private write(fields: LogFields, t: number): void {
    const again = this.counted > 0 ? { moreSinceLastLine: this.counted } : {};
    this.logger[this.severity](this.msg, { ...fields, ...again });
    this.lastLineAt = t;
    this.counted = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
