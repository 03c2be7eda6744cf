// "Run again after this run if asked, never two at once", per key: the one coalescing primitive.
// A request while a run of its key is in flight marks one more run, which starts after the current
// one; any number of requests meanwhile collapse into that one. Every caller's promise settles when
// a run that started after its request has finished, so a caller that heard of a change is never
// answered by a run that began before it. A failed run rejects the promises of those waiting on it
// (and only them); the next request runs again.
//
// With a `concurrency` limit, at most that many keys run at once (the API client's sockets, say); a
// key that must wait takes its turn in the order asked, and requests for it while it waits join
// that one run. A key's follow-up run queues behind keys already waiting, so one busy key never
// keeps the others out.

interface KeyState {
  /** The run in flight, and the callers it answers. */
  running?: Promise<void>;
  /** Set when one more run is wanted (asked during the run in flight, or waiting for a slot); the callers it answers. */
  queued?: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
}

export interface KeyedSerialRunnerOptions {
  /** At most this many keys run at once; default unlimited. */
  concurrency?: number;
}

export class KeyedSerialRunner<K = string> {
  private readonly keys = new Map<K, KeyState>();
  /** Keys whose next run waits for a slot, in the order they asked (a Set keeps insertion order). */
  private readonly waitingForSlot = new Set<K>();
  private readonly limit: number;
  private active = 0;

  constructor(
    private readonly work: (key: K) => Promise<void>,
    opts: KeyedSerialRunnerOptions = {},
  ) {
    this.limit = opts.concurrency ?? Infinity;
    if (!(this.limit >= 1))
      throw new Error(`KeyedSerialRunner: concurrency must be at least 1, not ${String(opts.concurrency)}`);
  }

  /** Runs `work(key)` now, or once more after the run in flight; settles when that run has. */
  run(key: K): Promise<void> {
    return this.ask(key, true) ?? Promise.resolve();
  }

  /**
   * As `run`, for a caller that does not wait: nothing is kept per call, so any number of wakes
   * cost one pending run. Meant for work that handles its own failures; a failure is dropped here.
   */
  wake(key: K): void {
    void this.ask(key, false)?.catch(() => undefined);
  }

  private ask(key: K, answer: boolean): Promise<void> | undefined {
    let st = this.keys.get(key);
    if (!st) {
      st = {};
      this.keys.set(key, st);
    }
    if (st.running || this.waitingForSlot.has(key)) return this.enqueue(st, answer);
    if (this.active >= this.limit) {
      this.waitingForSlot.add(key);
      return this.enqueue(st, answer);
    }
    return this.start(key, st);
  }

  /** Whether a run of `key` is in flight. */
  busy(key: K): boolean {
    return this.keys.get(key)?.running !== undefined;
  }

  /** Keys with a run in flight or one to come. */
  pendingKeys(): K[] {
    return [...this.keys.keys()];
  }

  /** Resolves when no run of any key is in flight or queued (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const pending = [...this.keys.values()].map((s) => s.running).filter((p): p is Promise<void> => p !== undefined);
      if (pending.length === 0) return;
      await Promise.allSettled(pending);
    }
  }

  /** Marks one more run of the key; with `answer`, a promise settled by that run. */
  private enqueue(st: KeyState, answer: boolean): Promise<void> | undefined {
    const queue = (st.queued ??= []);
    if (!answer) return undefined;
    return new Promise<void>((resolve, reject) => queue.push({ resolve, reject }));
  }

  private start(key: K, st: KeyState): Promise<void> {
    this.active++;
    const p = (async () => {
      try {
        // Through an async wrapper: a work function that throws before returning its promise must
        // still end here after `running` is set, not before.
        await (async () => this.work(key))();
      } finally {
        st.running = undefined;
        this.active--;
        if (st.queued) {
          if (this.active < this.limit && this.waitingForSlot.size === 0) this.startQueued(key, st);
          else this.waitingForSlot.add(key);
        } else this.keys.delete(key);
        this.fillSlots();
      }
    })();
    st.running = p;
    return p;
  }

  /** Starts the run that `st.queued` waits for, and answers them with it. */
  private startQueued(key: K, st: KeyState): void {
    const waiting = st.queued ?? [];
    st.queued = undefined;
    this.start(key, st).then(
      () => waiting.forEach((w) => w.resolve()),
      (err: unknown) => waiting.forEach((w) => w.reject(err)),
    );
  }

  private fillSlots(): void {
    for (const key of this.waitingForSlot) {
      if (this.active >= this.limit) return;
      this.waitingForSlot.delete(key);
      const st = this.keys.get(key);
      if (st && !st.running) this.startQueued(key, st);
    }
  }
}
