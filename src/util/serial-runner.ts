// "Run again after this run if asked, never two at once", per key: the one coalescing primitive.
// A request while a run of its key is in flight marks one more run, which starts after the current
// one; any number of requests meanwhile collapse into that one. Every caller's promise settles when
// a run that started after its request has finished, so a caller that heard of a change is never
// answered by a run that began before it. A failed run rejects the promises of those waiting on it
// (and only them); the next request runs again.

interface KeyState {
  /** The run in flight, and the callers it answers. */
  running?: Promise<void>;
  /** Callers that arrived during the run in flight: answered by the next one. */
  queued?: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
}

export class KeyedSerialRunner<K = string> {
  private readonly keys = new Map<K, KeyState>();

  constructor(private readonly work: (key: K) => Promise<void>) {}

  /** Runs `work(key)` now, or once more after the run in flight; settles when that run has. */
  run(key: K): Promise<void> {
    let st = this.keys.get(key);
    if (!st) {
      st = {};
      this.keys.set(key, st);
    }
    if (st.running) {
      const queue = (st.queued ??= []);
      return new Promise<void>((resolve, reject) => queue.push({ resolve, reject }));
    }
    return this.start(key, st);
  }

  /** Whether a run of `key` is in flight. */
  busy(key: K): boolean {
    return this.keys.get(key)?.running !== undefined;
  }

  /** Resolves when no run of any key is in flight or queued (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const pending = [...this.keys.values()].map((s) => s.running).filter((p): p is Promise<void> => p !== undefined);
      if (pending.length === 0) return;
      await Promise.allSettled(pending);
    }
  }

  private start(key: K, st: KeyState): Promise<void> {
    const p = (async () => {
      try {
        await this.work(key);
      } finally {
        st.running = undefined;
        const waiting = st.queued;
        st.queued = undefined;
        if (waiting && waiting.length > 0) {
          this.start(key, st).then(
            () => waiting.forEach((w) => w.resolve()),
            (err: unknown) => waiting.forEach((w) => w.reject(err)),
          );
        } else if (!st.running) this.keys.delete(key);
      }
    })();
    st.running = p;
    return p;
  }
}
