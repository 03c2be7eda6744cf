// Keeps trying to bind one local endpoint. A port or socket path that is taken (another process,
// a squatting local user) must not stop the agent: the pods matter more than their endpoints. The
// reason is logged once, again only when it changes, and the success once it finally binds.
import { Backoff } from '../util/backoff.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/error-message.js';

export interface BoundEndpoint {
  /** Where it is served: `http://127.0.0.1:10248` or the socket path. */
  readonly where: string;
  close(): Promise<void>;
}

/** A bind attempt that failed for a reason worth one log line (already says what to change). */
export class BindError extends Error {
  override name = 'BindError';
}

/**
 * Not a failure: what the endpoint needs is on its way (a serving certificate being generated).
 * The listener waits for `until` to settle, then binds; nothing is logged above verbosity 2.
 */
export class BindPending extends Error {
  override name = 'BindPending';
  constructor(
    message: string,
    readonly until: Promise<unknown>,
  ) {
    super(message);
  }
}

export interface ListenerSpec {
  /** In log lines: "healthz", "the read-only port", "the bootlet pods socket". */
  readonly what: string;
  /** Fields that say where, for the error line: `{ address: '127.0.0.1:10248' }`. */
  readonly fields: Record<string, string>;
  /** One attempt; rejects with a BindError whose message names the flag to change. */
  bind(): Promise<BoundEndpoint>;
  /** Logged once bound, e.g. `{ paths: '/healthz' }`. */
  readonly servingFields?: Record<string, string>;
}

export interface RetryOptions {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BIND_RETRY: RetryOptions = { initialMs: 1_000, maxMs: 10_000 };

export class SupervisedListener {
  private bound: BoundEndpoint | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private lastReason: string | undefined;
  private failures = 0;
  private readonly backoff: Backoff;
  private attempt: Promise<void> | undefined;

  constructor(
    private readonly spec: ListenerSpec,
    private readonly logger: Logger,
    retry: RetryOptions = DEFAULT_BIND_RETRY,
  ) {
    this.backoff = new Backoff({ initialMs: retry.initialMs, maxMs: retry.maxMs, jitter: 0.2, resetAfterMs: 0 });
  }

  /** Makes the first attempt; resolves once it bound or failed (then retries in the background). */
  start(): Promise<void> {
    return this.tryBind();
  }

  /** Where it is served, once bound. */
  get where(): string | undefined {
    return this.bound?.where;
  }

  /** A reason to fail has gone away (a certificate arrived): try now instead of at the next back-off. */
  retryNow(): void {
    if (this.closed || this.bound || !this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.tryBind();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.attempt;
    const b = this.bound;
    this.bound = undefined;
    await b?.close();
  }

  private tryBind(): Promise<void> {
    this.attempt = this.bindOnce();
    return this.attempt;
  }

  private async bindOnce(): Promise<void> {
    try {
      const b = await this.spec.bind();
      if (this.closed) return await b.close();
      this.bound = b;
      this.logger.info(`Serving ${this.spec.what}`, {
        at: b.where,
        ...this.spec.servingFields,
        ...(this.failures > 0 ? { afterFailedAttempts: this.failures } : {}),
      });
    } catch (err) {
      this.failed(err);
    }
  }

  private failed(err: unknown): void {
    if (this.closed) return;
    if (err instanceof BindPending) {
      this.logger.v(2).info(`Waiting to serve ${this.spec.what}`, { ...this.spec.fields, why: err.message });
      const retry = (): void => {
        if (!this.closed && !this.bound && !this.timer) void this.tryBind();
      };
      void err.until.then(retry, retry);
      return;
    }
    this.failures++;
    const reason = errorMessage(err);
    if (reason !== this.lastReason) {
      this.logger.error(`Cannot serve ${this.spec.what}; the agent runs on and retries with back-off`, {
        ...this.spec.fields,
        err: reason,
      });
      this.lastReason = reason;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tryBind();
    }, this.backoff.next());
    this.timer.unref();
  }
}
