// At most `max` operations at once; the rest wait in the order they asked. A failed operation frees
// its place like one that succeeded.
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly max: number) {
    if (!(max >= 1)) throw new Error(`a concurrency limit must be at least 1, not ${String(max)}`);
  }

  /** Operations running now. */
  get active(): number {
    return this.running;
  }

  async run<T>(op: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await op();
    } finally {
      // The place passes straight to the next in line, so a newcomer cannot overtake it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
