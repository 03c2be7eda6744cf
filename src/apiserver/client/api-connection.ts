// The connection of one API client to the API server: one HTTP/2 session that carries every
// request, watch and reachability probe at once, as client-go multiplexes them, so a node holds one
// TLS connection where it held one per request in flight, plus one per watch and per probe. TLS
// offers h2 and http/1.1 (ALPN); a server that picks http/1.1 is spoken to over two keep-alive pools
// (http1-pools.ts: watches apart from short requests), starting on the connection that found out.
// Every new connection negotiates again: a server that spoke HTTP/1.1 (a load balancer in front of
// it) and speaks h2 after an outage is spoken to over h2.
//
// A stream that fails, times out or is given up is reset alone; the session stays. The session is
// dropped (and the next request opens a new one) when the server closes it (GOAWAY), when it fails,
// when the client resets it (a request got no answer: the connection is presumed dead, as the
// kubelet closes its connections then), or when a probe asks for a fresh one (the last probe is
// still unanswered, so this connection may be dead). A drained session takes no new streams and
// closes once the ones it carries end (client certificate rotation: the client ends the watches on it
// and lets its requests finish). At most two connections are open at a time: the current one (or the
// handshake of the next) and one draining; a session still draining when another is retired is
// closed, since what it carries are requests to a server that does not answer.
import {
  connect as http2Connect,
  constants as h2,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders as H2Headers,
} from 'node:http2';
import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { TransportError } from './api-error.js';
import {
  first,
  type ApiExchange,
  type ApiResponse,
  type ConnectionTls,
  type Protocol,
  type SendOptions,
} from './exchange.js';
import { Http1Pools } from './http1-pools.js';

/** A TLS handshake that has not finished in this long is given up (a SYN that is never answered). */
const CONNECT_TIMEOUT_MS = 5000;

export class ApiConnection {
  private session: ClientHttp2Session | undefined;
  private connecting: Promise<ClientHttp2Session | 'http/1.1'> | undefined;
  private connectingSocket: { destroy(): void } | undefined;
  /** Sessions that take no new streams and close when theirs end (at most one: see retire). */
  private readonly draining = new Set<ClientHttp2Session>();
  private negotiated: Protocol | undefined;
  private h1: Http1Pools | undefined;
  /** The HTTP/1.1 connections were presumed dead: the next one negotiates again. */
  private renegotiate = false;
  private closed = false;

  constructor(
    private readonly origin: URL,
    private readonly tls: ConnectionTls,
    /** Connections of the HTTP/1.1 fallback's short requests (its watches have their own each). */
    private readonly maxSockets: number,
  ) {}

  /** What the server spoke on the last connection, once known. */
  get protocol(): Protocol | undefined {
    return this.negotiated;
  }

  /**
   * Whether a request sent now would open a new TLS connection: no session (HTTP/2) or idle socket
   * (HTTP/1.1) to send it on, and no handshake under way to wait for.
   */
  get needsHandshake(): boolean {
    if (this.closed || this.connecting) return false;
    if (this.negotiated === 'http/1.1' && !this.mustNegotiate()) return !this.h1?.idleForRequest;
    const s = this.session;
    return !s || s.closed || s.destroyed;
  }

  send(o: SendOptions): ApiExchange {
    let cancelled = false;
    let cancelNow: () => void = () => {};
    const response = (async (): Promise<ApiResponse> => {
      const session = await this.sessionFor(o.fresh === true);
      if (cancelled) throw new TransportError('reset', 'given up before it was sent');
      if (session === 'http/1.1') return this.http1().send(o, (c) => (cancelNow = c));
      return sendHttp2(session, o, (c) => (cancelNow = c));
    })();
    return {
      response,
      cancel: () => {
        cancelled = true;
        cancelNow();
      },
    };
  }

  /** The connection is presumed dead: every stream on it fails now, the next request opens a new one. */
  reset(): void {
    this.connectingSocket?.destroy();
    this.session?.destroy();
    this.session = undefined;
    if (this.h1) {
      this.h1.closeIdle();
      this.renegotiate = true;
    }
  }

  /** No new streams here; what is in flight finishes, then the connection closes. */
  drain(): void {
    this.closed = true;
    if (this.session) this.retire(this.session);
    this.session = undefined;
    this.h1?.drain();
  }

  /** Whether anything still runs on it (a drained connection can be forgotten once this is false). */
  get busy(): boolean {
    return (
      this.session !== undefined || this.connecting !== undefined || this.draining.size > 0 || (this.h1?.busy ?? 0) > 0
    );
  }

  destroy(): void {
    this.closed = true;
    this.reset();
    for (const s of this.draining) s.destroy();
    this.draining.clear();
    this.h1?.destroy();
  }

  private http1(): Http1Pools {
    this.h1 ??= new Http1Pools(this.tls, this.maxSockets);
    return this.h1;
  }

  /**
   * Takes no new streams and closes once its own end. One draining at a time: an older session still
   * draining is closed now, so a server that never answers costs two connections, not one per probe.
   */
  private retire(session: ClientHttp2Session): void {
    for (const older of this.draining) if (older !== session) older.destroy();
    this.draining.clear();
    if (session.destroyed) return;
    this.draining.add(session);
    session.close(() => this.draining.delete(session));
  }

  /** HTTP/1.1 so far, but the next connection is a new one anyway (none open, or all presumed dead): it asks for h2 again. */
  private mustNegotiate(): boolean {
    return this.renegotiate || (this.h1?.open ?? 0) === 0;
  }

  private sessionFor(fresh: boolean): Promise<ClientHttp2Session | 'http/1.1'> {
    if (this.closed) return Promise.reject(new TransportError('other', 'client closed'));
    if (this.negotiated === 'http/1.1' && !this.connecting) {
      if (fresh) this.h1?.closeIdle();
      else if (!this.mustNegotiate()) return Promise.resolve('http/1.1');
    }
    if (fresh && this.session) {
      this.retire(this.session);
      this.session = undefined;
    }
    const s = this.session;
    if (s && !s.closed && !s.destroyed) return Promise.resolve(s);
    this.session = undefined;
    // A handshake under way is as fresh as a new one would be: never two at once.
    if (!this.connecting) {
      const attempt = this.open().finally(() => {
        if (this.connecting === attempt) this.connecting = undefined;
      });
      this.connecting = attempt;
    }
    return this.connecting;
  }

  private open(): Promise<ClientHttp2Session | 'http/1.1'> {
    const host = this.origin.hostname.replace(/^\[|\]$/g, '');
    const port = Number(this.origin.port || 443);
    const servername = this.tls.servername ?? (isIP(host) ? undefined : host);
    return new Promise((resolve, reject) => {
      const socket = tlsConnect({
        host,
        port,
        servername,
        secureContext: this.tls.secureContext,
        ALPNProtocols: ['h2', 'http/1.1'],
        rejectUnauthorized: true,
      });
      this.connectingSocket = socket;
      const timer = setTimeout(
        () =>
          fail(
            new TransportError(
              'timeout',
              `connect ${this.origin.host}: no TLS handshake within ${CONNECT_TIMEOUT_MS} ms`,
            ),
          ),
        CONNECT_TIMEOUT_MS,
      );
      const fail = (e: unknown): void => {
        clearTimeout(timer);
        if (this.connectingSocket === socket) this.connectingSocket = undefined;
        socket.destroy();
        reject(TransportError.from(e));
      };
      socket.once('error', fail);
      socket.once('close', () =>
        fail(new TransportError('reset', `connect ${this.origin.host}: closed during the TLS handshake`)),
      );
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('close');
        socket.off('error', fail);
        if (this.connectingSocket === socket) this.connectingSocket = undefined;
        if (this.closed) {
          socket.destroy();
          return reject(new TransportError('other', 'client closed'));
        }
        this.renegotiate = false;
        if (socket.alpnProtocol !== 'h2') {
          // The server does not speak HTTP/2: the pools take this connection for their next request.
          this.negotiated = 'http/1.1';
          this.http1().adopt(socket);
          return resolve('http/1.1');
        }
        this.negotiated = 'h2';
        const session = http2Connect(this.origin, { createConnection: () => socket });
        // Failures reach the streams; a session that fails or is told to go away is replaced.
        session.on('error', () => undefined);
        const forget = (): void => {
          if (this.session === session) this.session = undefined;
        };
        session.on('close', forget);
        session.on('goaway', forget);
        session.unref();
        if (this.session && this.session !== session) this.retire(this.session);
        this.session = session;
        resolve(session);
      });
    });
  }
}

/** Open streams per session: a session with none lets the process exit, as idle keep-alive sockets do. */
const openStreams = new WeakMap<ClientHttp2Session, number>();

function sendHttp2(
  session: ClientHttp2Session,
  o: SendOptions,
  onCancel: (c: () => void) => void,
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ':method': o.method, ':path': `${o.url.pathname}${o.url.search}` };
  for (const [k, v] of Object.entries(o.headers)) headers[k.toLowerCase()] = v;
  let stream: ClientHttp2Stream;
  try {
    stream = session.request(headers, { endStream: o.body === undefined });
  } catch (e) {
    return Promise.reject(TransportError.from(e));
  }
  openStreams.set(session, (openStreams.get(session) ?? 0) + 1);
  session.ref();
  let ended = false;
  stream.on('end', () => (ended = true));
  stream.once('close', () => {
    const n = (openStreams.get(session) ?? 1) - 1;
    openStreams.set(session, n);
    if (n === 0 && !session.destroyed) session.unref();
  });
  onCancel(() => {
    if (!stream.destroyed) stream.close(h2.NGHTTP2_CANCEL);
  });
  if (o.body !== undefined) stream.end(o.body);
  return new Promise((resolve, reject) => {
    stream.on('error', (e) => reject(TransportError.from(e)));
    stream.once('close', () =>
      reject(new TransportError('reset', `stream closed before an answer (HTTP/2 code ${stream.rstCode ?? 'none'})`)),
    );
    stream.once('response', (h: H2Headers) =>
      resolve({
        status: Number(h[':status'] ?? 0),
        header: (name) => first(h[name]),
        body: stream,
        get complete() {
          return ended;
        },
      }),
    );
  });
}
