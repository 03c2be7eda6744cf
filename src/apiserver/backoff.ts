// Jittered exponential back-off. Jitter spreads the retries of many objects (and many nodes) so
// that a returning API server is not hit by all of them in the same millisecond.

export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
    /** Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]. */
    private readonly jitter = 0.2,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    if (base < this.maxMs) this.attempt++;
    return Math.round(base * (1 - this.jitter + 2 * this.jitter * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }

  get failures(): number {
    return this.attempt;
  }
}
