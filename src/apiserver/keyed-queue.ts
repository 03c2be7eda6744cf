// The per-object work queue (one entry per mirror pod name). It holds keys, never payloads: the
// worker reads the latest desired state when it runs, so any number of changes to one object while
// the server is away cost one entry and one request when it returns. Memory is bounded by the number
// of objects, not by the number of changes or by how long the server was away.
import type { Logger } from '../log/logger.js';
import { Backoff } from '../util/backoff.js';
import { describeError, isRefused, isUnavailable } from './api-error.js';
import type { ConnectionGate } from './connectivity.js';
import { API_REFUSED_BACKOFF, API_RETRY_BACKOFF } from './retry-policy.js';

interface RetryState {
  backoff: Backoff;
  slow: Backoff;
  timer?: NodeJS.Timeout;
  lastError: string;
}

export class KeyedQueue {
  private readonly dirty = new Set<string>();
  private readonly inFlight = new Set<string>();
  private readonly retries = new Map<string, RetryState>();
  private readonly idleWaiters: (() => void)[] = [];
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly process: (key: string) => Promise<void>,
    private readonly conn: ConnectionGate,
    private readonly logger: Logger,
    private readonly concurrency = 8,
  ) {
    conn.onUp(() => this.pump());
  }

  add(key: string): void {
    if (this.stopped) return;
    const r = this.retries.get(key);
    if (r?.timer) {
      clearTimeout(r.timer);
      r.timer = undefined;
    }
    this.dirty.add(key);
    this.pump();
  }

  /** Forgets a key that no longer needs work (e.g. an event dropped from a full buffer). */
  remove(key: string): void {
    this.dirty.delete(key);
    const r = this.retries.get(key);
    if (r?.timer) clearTimeout(r.timer);
    this.retries.delete(key);
  }

  addAll(keys: Iterable<string>): void {
    for (const k of keys) this.add(k);
  }

  /** Keys waiting or running (for tests and the memory bound). */
  get size(): number {
    return new Set([...this.dirty, ...this.inFlight]).size;
  }

  /** Resolves when nothing is waiting or running (retries on timers excluded). */
  idle(): Promise<void> {
    if (this.dirty.size === 0 && this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const r of this.retries.values()) if (r.timer) clearTimeout(r.timer);
    this.retries.clear();
    this.dirty.clear();
    await this.idle();
  }

  private pump(): void {
    if (this.stopped || !this.conn.usable) return;
    for (const key of this.dirty) {
      if (this.inFlight.size >= this.concurrency) break;
      if (this.inFlight.has(key)) continue; // runs again after the current pass
      this.dirty.delete(key);
      this.inFlight.add(key);
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    try {
      await this.process(key);
      this.succeeded(key);
    } catch (e) {
      if (this.stopped) {
        // shutting down: nothing to retry
      } else if (isUnavailable(e) && !this.conn.usable) {
        this.dirty.add(key); // retried when the server is back
      } else {
        const r = this.retries.get(key) ?? { backoff: new Backoff(API_RETRY_BACKOFF), slow: new Backoff(API_REFUSED_BACKOFF), lastError: '' };
        this.retries.set(key, r);
        const msg = describeError(e);
        if (isRefused(e) && msg !== r.lastError) this.logger.warn(`${this.name} failed; will retry`, { key, err: msg });
        else this.logger.v(isUnavailable(e) ? 4 : 2).info(`${this.name} failed; will retry`, { key, err: msg });
        r.lastError = msg;
        r.timer = setTimeout(() => {
          r.timer = undefined;
          this.add(key);
        }, isRefused(e) ? r.slow.next() : r.backoff.next());
      }
    } finally {
      this.inFlight.delete(key);
      if (this.dirty.size === 0 && this.inFlight.size === 0) for (const w of this.idleWaiters.splice(0)) w();
      this.pump();
    }
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
    for (const [k, e] of this.retries) if (!e.timer && e.backoff.settled() && e.slow.settled()) this.retries.delete(k);
  }
}
