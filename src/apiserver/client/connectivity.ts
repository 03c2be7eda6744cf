// Whether the API server is there. Every request reports its outcome here; the first failure that
// says "no server" (refused, cut, timeout, TLS, 5xx, 429) flips the state to down and logs once.
// While down, every worker waits and only a cheap probe runs, about every 250 ms, so a server
// that returns is noticed within a quarter of a second and the waiting writes go at once instead
// of each waiting out a back-off. The first answer flips the state up, logs once, and wakes them all.
//
// The probe is GET /readyz, not a TCP connect. Against a server that is not listening both cost the
// same (a refused connect; the TLS handshake never starts). But kube-apiserver listens well before
// it is ready: until its post-start hooks finish (RBAC roles, priority classes, etcd reachable) it
// answers /readyz with 500, and writes sent then meet 5xx or a 403 from an RBAC cache not yet
// filled, a refusal that would put each object on the slow back-off. /readyz says 200 only when
// the writes can succeed. It goes over the client's one connection, beside everything else (HTTP/2
// multiplexes; it never queues behind a stuck request). A server that accepts and never answers gets
// about a probe a second on that connection, and a fresh connection (the open one may be dead) only as
// often as probe-handshakes.ts allows: at most two connections, and handshakes on a back-off.
import type { Logger } from '../../log/logger.js';
import { Backoff } from '../../util/backoff.js';
import { MAX_PROBES_IN_FLIGHT, PROBE_HUNG_MS, PROBE_INTERVAL, PROBE_TIMEOUT_MS } from './retry-policy.js';
import { ApiError, describeError, isUnavailable, TransportError } from './api-error.js';
import { answered, type ApiClient } from './client.js';
import { ProbeHandshakes } from './probe-handshakes.js';

export type ConnectionState = 'unknown' | 'up' | 'down';

/** What the workers need to know: may we send now, and tell us when we may again. */
export interface ConnectionGate {
  readonly usable: boolean;
  onUp(listener: () => void): void;
}

/** What the Connectivity needs of the client. */
export type ProbeClient = Pick<ApiClient, 'observe' | 'request' | 'server' | 'abandonInFlight' | 'needsHandshake'>;

/** Retry-After is honoured, within reason: a wrong header must not silence the node for an hour. */
const MAX_RETRY_AFTER_MS = 30_000;

export class Connectivity implements ConnectionGate {
  private state: ConnectionState = 'unknown';
  private lastContactAt: Date | undefined;
  private readonly listeners: (() => void)[] = [];
  private readonly downListeners: (() => void)[] = [];
  private probeTimer: NodeJS.Timeout | undefined;
  /** Probes in flight, and those of them not yet waiting PROBE_HUNG_MS for an answer. */
  private probesInFlight = 0;
  private recentProbes = 0;
  private notBefore = 0;
  private stopped = false;
  private everUp = false;
  private readonly interval = new Backoff(PROBE_INTERVAL);
  private readonly handshakes = new ProbeHandshakes();

  constructor(
    private readonly client: ProbeClient,
    private readonly logger: Logger,
  ) {
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

  /** Told each time the server is found away (up or unknown → down). */
  onDown(listener: () => void): void {
    this.downListeners.push(listener);
  }

  private succeeded(): void {
    this.lastContactAt = new Date();
    if (this.state === 'up' || this.stopped) return;
    this.state = 'up';
    this.cancelProbe();
    this.handshakes.answered();
    this.logger.info(this.everUp ? 'API server reachable again' : 'API server reachable', {
      server: this.client.server,
    });
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
      this.logger.info(
        !this.everUp
          ? 'API server not reachable yet; running on our own and retrying'
          : 'API server unreachable; running on our own and retrying',
        {
          server: this.client.server,
          err: describeError(e),
        },
      );
      // A request that got no answer at all: the others sent to the same server are as stuck. A
      // lease renewal sent into a hung server waited 10 s after it answered again.
      if (e instanceof TransportError && e.kind === 'timeout')
        this.client.abandonInFlight('the API server is not answering');
      for (const l of this.downListeners) l();
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
    if (
      this.probeTimer ||
      this.recentProbes > 0 ||
      this.probesInFlight >= MAX_PROBES_IN_FLIGHT ||
      this.stopped ||
      this.state !== 'down'
    )
      return;
    // At the flat pace: after the last probe's answer, or after the last one counted as hung.
    this.later(Math.max(this.interval.next(), this.notBefore - Date.now()));
  }

  private later(delay: number): void {
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      void this.probe();
    }, delay);
  }

  private async probe(): Promise<void> {
    if (this.state !== 'down' || this.stopped) return;
    // Company for probes still unanswered: that connection may be dead, so now and then this one opens another.
    const route = this.handshakes.route(this.probesInFlight > 0, this.client.needsHandshake);
    if ('waitMs' in route) return this.later(route.waitMs);
    this.probesInFlight++;
    this.recentProbes++;
    let recent = true;
    const notRecent = (): void => {
      if (!recent) return;
      recent = false;
      this.recentProbes--;
    };
    // A server that accepts and never answers holds a probe for its whole timeout: after a second
    // the next probe may go, so its coming back is seen at once.
    const hung = setTimeout(() => {
      notRecent();
      this.handshakes.hangs();
      this.scheduleProbe();
    }, PROBE_HUNG_MS);
    let outcome: unknown;
    try {
      // /readyz answers text, not JSON; a 200 that does not parse still counts as an answer, and
      // 401/403 on /readyz still mean a server is answering.
      await this.client.request('GET', '/readyz', {
        timeoutMs: PROBE_TIMEOUT_MS,
        freshConnection: route.fresh,
        unobserved: true,
      });
    } catch (e) {
      outcome = answered(e) ? undefined : e;
    } finally {
      clearTimeout(hung);
      // Answered, or failed before it counted as hung (refused, reset): this server does not hang.
      if (recent || !(outcome instanceof TransportError)) this.handshakes.answered();
      notRecent();
      this.probesInFlight--;
    }
    // The failure of a probe that another one overtook says nothing about the server now.
    if (outcome === undefined || this.state === 'down') this.report(outcome);
    this.scheduleProbe();
  }
}
