// Runs a job per key, never two at once for the same key: calls that arrive while one runs fold
// into a single run after it. Callers are never blocked and never see the job's errors.

export class PerKeyCoalescer {
  private readonly running = new Map<string, { again: boolean; done: Promise<void> }>();

  constructor(
    private readonly job: (key: string) => Promise<void>,
    private readonly onError: (key: string, err: unknown) => void,
    /** Wait this long before a run, so a burst of events (a pod starting) becomes one run. */
    private readonly settleMs = 0,
  ) {}

  request(key: string): void {
    const r = this.running.get(key);
    if (r) {
      r.again = true;
      return;
    }
    const entry = { again: true, done: Promise.resolve() };
    this.running.set(key, entry);
    entry.done = this.loop(key, entry);
  }

  /** Resolves when nothing is running or queued (for orderly shutdown and for tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  private async loop(key: string, entry: { again: boolean }): Promise<void> {
    // Yield first, so a burst of requests becomes one run.
    if (this.settleMs > 0) await new Promise((r) => setTimeout(r, this.settleMs));
    else await Promise.resolve();
    while (entry.again) {
      entry.again = false;
      try {
        await this.job(key);
      } catch (err) {
        this.onError(key, err);
      }
    }
    this.running.delete(key);
  }
}
