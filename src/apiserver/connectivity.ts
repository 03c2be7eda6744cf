// Whether the API server is there. Every request reports its outcome here; the first failure that
// says "no server" (refused, cut, timeout, TLS, 5xx, 429) flips the state to down and logs once.
// While down, only one cheap probe runs (GET /readyz, jittered back-off capped at 1 s so that a
// returning server is noticed well within the 2 s convergence budget) and every worker waits; the
// first success flips it up, logs once, and wakes them all. A server that flaps keeps the probe at
// its slower pace: the back-off starts again from 200 ms only after 10 s of the server being up.
import type { Logger } from '../log/logger.js';
import { Backoff, type BackoffPolicy } from '../util/backoff.js';
import { ApiError, describeError, isUnavailable, TransportError } from './api-error.js';
import type { ApiClient } from './client.js';

export type ConnectionState = 'unknown' | 'up' | 'down';

/** What the workers need to know: may we send now, and tell us when we may again. */
export interface ConnectionGate {
  readonly usable: boolean;
  onUp(listener: () => void): void;
}

/** Retry-After is honoured, within reason: a wrong header must not silence the node for an hour. */
const MAX_RETRY_AFTER_MS = 30_000;

const probePolicy = (maxMs: number): BackoffPolicy => ({ initialMs: Math.min(200, maxMs), maxMs, jitter: 0.2, resetAfterMs: 10_000 });

export class Connectivity implements ConnectionGate {
  private state: ConnectionState = 'unknown';
  private lastContactAt: Date | undefined;
  private readonly listeners: (() => void)[] = [];
  private probeTimer: NodeJS.Timeout | undefined;
  private probing = false;
  private notBefore = 0;
  private stopped = false;
  private everUp = false;
  private readonly backoff: Backoff;

  constructor(
    private readonly client: ApiClient,
    private readonly logger: Logger,
    probeMaxMs = 1000,
  ) {
    this.backoff = new Backoff(probePolicy(probeMaxMs));
    client.observe((e) => this.report(e));
  }

  get current(): ConnectionState {
    return this.state;
  }
  get lastContact(): Date | undefined {
    return this.lastContactAt;
  }
  /** Workers may send: up, or not yet known (the first requests are the first probes). */
  get usable(): boolean {
    return this.state !== 'down' && !this.stopped;
  }

  onUp(listener: () => void): void {
    this.listeners.push(listener);
  }

  private succeeded(): void {
    this.lastContactAt = new Date();
    if (this.state === 'up' || this.stopped) return;
    this.state = 'up';
    this.backoff.healthy();
    this.cancelProbe();
    this.logger.info(this.everUp ? 'API server reachable again' : 'API server reachable', { server: this.client.server });
    this.everUp = true;
    for (const l of this.listeners) l();
  }

  /** Every request's outcome (the client calls this): undefined = answered as hoped. */
  report(e?: unknown): void {
    if (e === undefined || !isUnavailable(e)) this.succeeded();
    else this.failed(e);
  }

  /** A request failed because the server is not (properly) there. */
  private failed(e: unknown): void {
    if (e instanceof ApiError && e.retryAfterSeconds !== undefined)
      this.notBefore = Math.max(this.notBefore, Date.now() + Math.min(e.retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS));
    if (this.state !== 'down' && !this.stopped) {
      this.state = 'down';
      this.logger.info(!this.everUp ? 'API server not reachable yet; running on our own and retrying' : 'API server unreachable; running on our own and retrying', {
        server: this.client.server,
        err: describeError(e),
      });
      // A request that got no answer at all: the others sent to the same server are as stuck. A
      // lease renewal sent into a hung server waited 10 s after it answered again.
      if (e instanceof TransportError && e.kind === 'timeout') this.client.abandonInFlight('the API server is not answering');
    }
    this.scheduleProbe();
  }

  stop(): void {
    this.stopped = true;
    this.cancelProbe();
  }

  private cancelProbe(): void {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
  }

  private scheduleProbe(): void {
    if (this.probeTimer || this.probing || this.stopped) return;
    const delay = Math.max(this.backoff.next(), this.notBefore - Date.now());
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      void this.probe();
    }, delay);
  }

  private async probe(): Promise<void> {
    if (this.state !== 'down' || this.stopped) return;
    this.probing = true;
    try {
      // /readyz answers text, not JSON; the client reports a 200 that does not parse as an answer.
      await this.client.request('GET', '/readyz', { timeoutMs: 5000 });
    } catch {
      // the client reported it; 401/403 on /readyz still means a server is answering
    } finally {
      this.probing = false;
    }
    if (this.state === 'down') this.scheduleProbe();
  }
}
