// Who may hold a connection to the kubelet API, and for how long. Anyone who can reach the port can
// open connections; what they cannot do is keep them without authenticating:
// - absolute deadlines, never reset by a byte: the TLS handshake within 10 s of the accept, a request
//   head within 10 s of the handshake (90 s after the last response on a kept-alive connection), a
//   request body within 10 s of its head;
// - connections that have not authenticated (handshake going on, or no request authenticated yet:
//   anonymous requests do not count) have a budget of their own; when it is full, the oldest of the
//   source address holding the most of them is closed, so a flood from one address evicts itself and
//   a fresh connection (a client certificate is authenticated at the handshake) is never refused;
// - a source address that has not authenticated a connection lately may open 16 new connections a
//   second (64 at once): beyond that they are closed at the accept, before a TLS handshake costs
//   anything;
// - connections in all are capped; only authenticated clients can reach that cap.
// Every cut is counted in one log line a minute per reason.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { CountedLine } from '../../log/counted-line.js';
import type { Logger } from '../../log/logger.js';

export interface ConnectionLimits {
  readonly handshakeMs: number;
  readonly firstHeadMs: number;
  /** A kept-alive connection's next request head must be complete this long after the last response. */
  readonly nextHeadMs: number;
  readonly bodyMs: number;
  readonly maxUnauthenticated: number;
  readonly maxConnections: number;
  /** New connections a source address may open per second, and at once, until it authenticates one. */
  readonly newPerSecond: number;
  readonly newBurst: number;
  /** How long a source that authenticated a connection is exempt from that rate. */
  readonly trustMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  handshakeMs: 10_000,
  firstHeadMs: 10_000,
  nextHeadMs: 90_000,
  bodyMs: 10_000,
  maxUnauthenticated: 128,
  maxConnections: 1024,
  newPerSecond: 16,
  newBurst: 64,
  trustMs: 10 * 60_000,
};

/** Source addresses remembered (rate buckets, trust); the least recently seen is forgotten first. */
const MAX_SOURCES = 4096;

interface Connection {
  readonly raw: Socket;
  readonly source: string;
  readonly key: string;
  authenticated: boolean;
  /** The handshake's or the next request head's deadline. */
  timer: NodeJS.Timeout | undefined;
  /** The current request body's deadline. */
  bodyTimer: NodeJS.Timeout | undefined;
}

type Cut = 'handshake' | 'head' | 'body';

const CUT_MESSAGES: Record<Cut, string> = {
  handshake: 'Closed a kubelet API connection that did not finish its TLS handshake in time',
  head: 'Closed a kubelet API connection that did not send a complete request head in time',
  body: 'Closed a kubelet API connection that did not send its request body in time',
};

/** Sets a source's entry as the most recently seen, forgetting the least recently seen beyond MAX_SOURCES. */
function remember<T>(m: Map<string, T>, source: string, value: T): void {
  m.delete(source);
  m.set(source, value);
  if (m.size > MAX_SOURCES) m.delete(m.keys().next().value!);
}

/** The key that finds a connection from its TLS socket: both sides of one TCP connection. */
function keyOf(s: { remoteAddress?: string; remotePort?: number; localPort?: number }): string {
  return `${s.remoteAddress ?? ''}|${s.remotePort ?? ''}|${s.localPort ?? ''}`;
}

export class ConnectionGate {
  private readonly byKey = new Map<string, Connection>();
  /** Connections not yet authenticated, by source address, oldest first. */
  private readonly unauthenticated = new Map<string, Set<Connection>>();
  private unauthenticatedCount = 0;
  private readonly cutLines: Record<Cut, CountedLine>;
  private readonly evictedLine: CountedLine;
  private readonly refusedLine: CountedLine;
  private readonly rateLine: CountedLine;
  /** Per source address: new-connection tokens, refilled at newPerSecond up to newBurst. */
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** Per source address: when it last authenticated a connection. */
  private readonly trusted = new Map<string, number>();

  constructor(
    logger: Logger,
    private readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.cutLines = {
      handshake: new CountedLine(logger, CUT_MESSAGES.handshake),
      head: new CountedLine(logger, CUT_MESSAGES.head),
      body: new CountedLine(logger, CUT_MESSAGES.body),
    };
    this.evictedLine = new CountedLine(
      logger,
      'Closed the oldest unauthenticated kubelet API connection of the busiest source: too many connections have not authenticated',
    );
    this.refusedLine = new CountedLine(logger, 'Refused a kubelet API connection: too many connections are open');
    this.rateLine = new CountedLine(
      logger,
      'Refused a kubelet API connection: too many new connections from an address that has not authenticated',
    );
  }

  /** Connections open now, and those not authenticated. */
  get counts(): { open: number; unauthenticated: number } {
    return { open: this.byKey.size, unauthenticated: this.unauthenticatedCount };
  }

  /** A TCP connection was accepted (before TLS). */
  accepted(raw: Socket): void {
    const source = raw.remoteAddress ?? '';
    // Closed before TLS: a handshake is the costly part of a connection, and nobody has authenticated yet.
    if (!this.isTrusted(source) && !this.takeToken(source)) {
      this.rateLine.hit({ remote: source });
      raw.destroy();
      return;
    }
    if (this.unauthenticatedCount >= this.limits.maxUnauthenticated) this.evictOne();
    if (this.byKey.size >= this.limits.maxConnections) {
      this.refusedLine.hit({ remote: source, open: this.byKey.size });
      raw.destroy();
      return;
    }
    const c: Connection = {
      raw,
      source,
      key: keyOf(raw),
      authenticated: false,
      timer: undefined,
      bodyTimer: undefined,
    };
    this.byKey.set(c.key, c);
    let set = this.unauthenticated.get(source);
    if (!set) this.unauthenticated.set(source, (set = new Set()));
    set.add(c);
    this.unauthenticatedCount++;
    raw.once('close', () => this.forget(c));
    this.deadline(c, 'handshake', this.limits.handshakeMs);
  }

  /** The TLS handshake is done; a verified client certificate authenticates the connection at once. */
  secured(socket: TLSSocket): void {
    const c = this.byKey.get(keyOf(socket));
    if (!c) return;
    if (socket.authorized) this.markAuthenticated(c);
    this.deadline(c, 'head', this.limits.firstHeadMs);
  }

  /** A request head is complete: its body (if it announced one) must follow in time. */
  requestStarted(req: IncomingMessage): void {
    const c = this.byKey.get(keyOf(req.socket));
    if (!c) return;
    this.clear(c);
    if (req.complete) return;
    // Checked when it fires, not cleared on 'end': nothing here reads bodies, and an unread one never ends.
    clearTimeout(c.bodyTimer);
    c.bodyTimer = setTimeout(() => {
      c.bodyTimer = undefined;
      if (!req.complete) this.cut(c, 'body');
    }, this.limits.bodyMs);
    c.bodyTimer.unref();
  }

  /** A response is done; the connection may be kept for the next request, which has its own deadline. */
  responded(res: ServerResponse): void {
    const c = this.byKey.get(keyOf(res.req.socket));
    if (c && !c.raw.destroyed) this.deadline(c, 'head', this.limits.nextHeadMs);
  }

  /** An upgraded connection (exec, attach, port-forward) belongs to its stream from now on. */
  upgraded(socket: Socket): void {
    const c = this.byKey.get(keyOf(socket));
    if (!c) return;
    this.clear(c);
    clearTimeout(c.bodyTimer);
  }

  /** A request on this socket was authenticated (not as system:anonymous). */
  authenticated(socket: { remoteAddress?: string; remotePort?: number; localPort?: number }): void {
    const c = this.byKey.get(keyOf(socket));
    if (c) this.markAuthenticated(c);
  }

  private markAuthenticated(c: Connection): void {
    remember(this.trusted, c.source, this.now());
    if (c.authenticated) return;
    c.authenticated = true;
    this.dropUnauthenticated(c);
  }

  private isTrusted(source: string): boolean {
    const at = this.trusted.get(source);
    return at !== undefined && this.now() - at < this.limits.trustMs;
  }

  private takeToken(source: string): boolean {
    const t = this.now();
    const b = this.buckets.get(source) ?? { tokens: this.limits.newBurst, at: t };
    b.tokens = Math.min(this.limits.newBurst, b.tokens + ((t - b.at) / 1000) * this.limits.newPerSecond);
    b.at = t;
    const ok = b.tokens >= 1;
    if (ok) b.tokens--;
    remember(this.buckets, source, b);
    return ok;
  }

  private dropUnauthenticated(c: Connection): void {
    const set = this.unauthenticated.get(c.source);
    if (!set?.delete(c)) return;
    this.unauthenticatedCount--;
    if (set.size === 0) this.unauthenticated.delete(c.source);
  }

  private forget(c: Connection): void {
    this.clear(c);
    clearTimeout(c.bodyTimer);
    if (this.byKey.get(c.key) === c) this.byKey.delete(c.key);
    this.dropUnauthenticated(c);
  }

  /** Closes the oldest unauthenticated connection of the source that holds the most of them. */
  private evictOne(): void {
    let busiest: Set<Connection> | undefined;
    for (const set of this.unauthenticated.values()) if (!busiest || set.size > busiest.size) busiest = set;
    const oldest = busiest?.values().next().value;
    if (!oldest) return;
    this.evictedLine.hit({ remote: oldest.source, fromThisSource: busiest!.size });
    this.forget(oldest);
    oldest.raw.destroy();
  }

  private deadline(c: Connection, cut: Cut, ms: number): void {
    this.clear(c);
    c.timer = setTimeout(() => {
      c.timer = undefined;
      this.cut(c, cut);
    }, ms);
    c.timer.unref();
  }

  private cut(c: Connection, cut: Cut): void {
    if (c.raw.destroyed) return;
    this.cutLines[cut].hit({ remote: c.source, authenticated: c.authenticated });
    c.raw.destroy();
  }

  /** Clears the handshake or head deadline. */
  private clear(c: Connection): void {
    clearTimeout(c.timer);
    c.timer = undefined;
  }
}
