// The API side's work queue: one entry per object (a mirror pod's name, an event's name, "node",
// "lease"). It holds keys, never payloads: the worker reads the latest desired state when it runs,
// so any number of changes to one object while the server is away cost one entry and one request
// when it returns. Memory is bounded by the number of objects, not by the number of changes or by
// how long the server was away.
//
// Underneath is the one coalescing primitive (KeyedSerialRunner: never two runs of a key at once,
// a wake during a run means one more run, at most `concurrency` keys at once). On top: keys wait
// for the server while the Connectivity says it is away and all go the moment it is back, and a
// failure with the server there is retried per key on the API back-off (retry-policy.ts).
import type { Logger } from '../../log/logger.js';
import { Backoff } from '../../util/backoff.js';
import { KeyedSerialRunner } from '../../util/serial-runner.js';
import { describeError, isRefused, isUnavailable } from './api-error.js';
import type { ConnectionGate } from './connectivity.js';
import { API_REFUSED_BACKOFF, API_RETRY_BACKOFF } from './retry-policy.js';

interface RetryState {
  backoff: Backoff;
  /** A refusal (403, 422...) needs someone to fix something: retried slowly. */
  slow: Backoff;
  lastError: string;
}

interface Timer {
  handle: NodeJS.Timeout;
  dueAt: number;
}

export interface KeyedQueueOptions {
  /** Keys worked on at once. Default 8, the client's sockets. */
  concurrency?: number;
  /**
   * How the first failure of a kind is logged when it is not a refusal: `info` for rare work worth
   * seeing (node status, lease), `debug` (verbosity 2) for per-object work. Refusals always warn.
   */
  failureLog?: 'info' | 'debug';
}

export class KeyedQueue {
  private readonly runner: KeyedSerialRunner<string>;
  /** Keys that wait for the server to come back. */
  private readonly held = new Set<string>();
  /** Keys that run whenever the server comes back, held or not (runWhenBack). */
  private readonly whenBack = new Set<string>();
  /** Runs asked for later: a retry, or a pause the worker asked for. */
  private readonly timers = new Map<string, Timer>();
  private readonly retries = new Map<string, RetryState>();
  private readonly failureLog: 'info' | 'debug';
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly process: (key: string) => Promise<void>,
    private readonly conn: ConnectionGate,
    private readonly logger: Logger,
    opts: KeyedQueueOptions = {},
  ) {
    this.runner = new KeyedSerialRunner((key) => this.work(key), { concurrency: opts.concurrency ?? 8 });
    this.failureLog = opts.failureLog ?? 'debug';
    conn.onUp(() => this.release());
  }

  /** Work on `key` as soon as the server and a slot allow (coalesced with a run already asked for). */
  add(key: string): void {
    if (this.stopped) return;
    this.clearTimer(key);
    if (!this.conn.usable) {
      this.held.add(key);
      return;
    }
    this.held.delete(key);
    this.runner.wake(key);
  }

  addAll(keys: Iterable<string>): void {
    for (const k of keys) this.add(k);
  }

  /** Work on `key` in `ms`, unless something adds it earlier. Of two such timers the earlier wins. */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    const dueAt = Date.now() + ms;
    const t = this.timers.get(key);
    if (t && t.dueAt <= dueAt) return;
    this.clearTimer(key);
    const handle = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, { handle, dueAt });
  }

  /**
   * `key` runs every time the server comes back, whether it was held or not (node status, lease:
   * at once, not at their next tick). Once: a held tick and the return are one ask, not a run and
   * then one more because the second ask came while the first ran.
   */
  runWhenBack(key: string): void {
    this.whenBack.add(key);
  }

  /** Forgets a key that no longer needs work (e.g. an event dropped from a full buffer). */
  remove(key: string): void {
    this.held.delete(key);
    this.clearTimer(key);
    this.retries.delete(key);
  }

  /** Keys waiting or running (for tests and the memory bound). */
  get size(): number {
    return new Set([...this.held, ...this.runner.pendingKeys()]).size;
  }

  /** Resolves when nothing is running or waiting for a slot (keys held for the server, and timers, excluded). */
  idle(): Promise<void> {
    return this.runner.idle();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t.handle);
    this.timers.clear();
    this.retries.clear();
    this.held.clear();
    await this.idle();
  }

  private clearTimer(key: string): void {
    const t = this.timers.get(key);
    if (!t) return;
    clearTimeout(t.handle);
    this.timers.delete(key);
  }

  /** The server is back: everything held goes at once (the runner keeps it within `concurrency`). */
  private release(): void {
    if (this.stopped || !this.conn.usable) return;
    const keys = new Set([...this.held, ...this.whenBack]);
    this.held.clear();
    for (const k of keys) this.runner.wake(k);
  }

  private async work(key: string): Promise<void> {
    if (this.stopped) return;
    // Waited for a slot while the server went away: wait for it instead.
    if (!this.conn.usable) {
      this.held.add(key);
      return;
    }
    try {
      await this.process(key);
      this.succeeded(key);
    } catch (e) {
      this.failed(key, e);
    }
  }

  private failed(key: string, e: unknown): void {
    if (this.stopped) return;
    if (isUnavailable(e) && !this.conn.usable) {
      this.held.add(key); // retried when the server is back
      return;
    }
    const r = this.retries.get(key) ?? {
      backoff: new Backoff(API_RETRY_BACKOFF),
      slow: new Backoff(API_REFUSED_BACKOFF),
      lastError: '',
    };
    this.retries.set(key, r);
    const msg = describeError(e);
    const fresh = msg !== r.lastError;
    r.lastError = msg;
    if (isRefused(e) && fresh) this.logger.warn(`${this.name} failed; will retry`, { key, err: msg });
    else if (fresh && !isUnavailable(e) && this.failureLog === 'info')
      this.logger.info(`${this.name} failed; will retry`, { key, err: msg });
    else if (fresh) this.logger.v(isUnavailable(e) ? 4 : 2).info(`${this.name} failed; will retry`, { key, err: msg });
    else this.logger.v(4).info(`${this.name} failed again`, { key, err: msg });
    this.addAfter(key, isRefused(e) ? r.slow.next() : r.backoff.next());
  }

  /**
   * A key that failed before keeps its back-off until it has gone through for a while, so that one
   * success between failures does not reset it. Entries that have settled are dropped here, which
   * keeps the map bounded by the keys that failed recently.
   */
  private succeeded(key: string): void {
    const r = this.retries.get(key);
    if (!r) return;
    r.backoff.healthy();
    r.slow.healthy();
    r.lastError = '';
    for (const [k, e] of this.retries)
      if (!this.timers.has(k) && e.backoff.settled() && e.slow.settled()) this.retries.delete(k);
  }
}
