// One job that talks to the API server (register the node, renew the lease, post node status),
// run serially: a kick while it runs means "once more after this", never two at a time and never
// a queue. While the server is down it waits for the Connectivity to say up; other failures are
// retried with a jittered back-off and logged once per distinct error.
import type { Logger } from '../log/logger.js';
import { Backoff } from '../util/backoff.js';
import { describeError, isRefused, isUnavailable } from './api-error.js';
import type { ConnectionGate } from './connectivity.js';
import { API_REFUSED_BACKOFF, API_RETRY_BACKOFF } from './retry-policy.js';

export class SerialTask {
  private running = false;
  private pending = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastError = '';
  private readonly backoff = new Backoff(API_RETRY_BACKOFF);
  /** A refusal (403, 422...) needs someone to fix something: retry slowly. */
  private readonly slow = new Backoff(API_REFUSED_BACKOFF);
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly name: string,
    private readonly fn: () => Promise<void>,
    private readonly conn: ConnectionGate,
    private readonly logger: Logger,
  ) {
    conn.onUp(() => this.kick());
  }

  /** Run as soon as possible (coalesced with any run already asked for). */
  kick(): void {
    if (this.stopped) return;
    this.pending = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.pump();
  }

  /** Run after `ms`, unless something runs it earlier. */
  kickAfter(ms: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, ms);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pending = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }

  private pump(): void {
    if (this.running || !this.pending || this.stopped || !this.conn.usable) return;
    this.pending = false;
    this.running = true;
    this.current = this.runOnce().finally(() => {
      this.running = false;
      this.pump();
    });
  }

  private async runOnce(): Promise<void> {
    try {
      await this.fn();
      this.backoff.healthy();
      this.slow.healthy();
      this.lastError = '';
    } catch (e) {
      if (isUnavailable(e)) {
        // Down: the Connectivity's probe wakes us when the server is back; if another request
        // already brought it back, retry on our own back-off.
        if (this.conn.usable) this.kickAfter(this.backoff.next());
        else this.pending = true;
        return;
      }
      const msg = describeError(e);
      // Waiting for a Node someone else registers is expected, not worth a warning.
      if (msg !== this.lastError && isRefused(e)) this.logger.warn(`${this.name} failed; will retry`, { err: msg });
      else if (msg !== this.lastError) this.logger.info(`${this.name} failed; will retry`, { err: msg });
      else this.logger.v(4).info(`${this.name} failed again`, { err: msg });
      this.lastError = msg;
      this.kickAfter(isRefused(e) ? this.slow.next() : this.backoff.next());
    }
  }
}
