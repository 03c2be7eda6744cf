// The connection of one API client to the API server: one HTTP/2 session that carries every
// request, watch and reachability probe at once, as client-go multiplexes them, so a node holds one
// TLS connection where it held one per request in flight, plus one per watch and per probe. TLS
// offers h2 and http/1.1 (ALPN); a server that picks http/1.1 is spoken to over a keep-alive
// https.Agent instead, as before.
//
// A stream that fails, times out or is given up is reset alone; the session stays. The session is
// dropped (and the next request opens a new one) when the server closes it (GOAWAY), when it fails,
// when the client resets it (a request got no answer: the connection is presumed dead, as the
// kubelet closes its connections then), or when a probe asks for a fresh one (the last probe is
// still unanswered, so this connection may be dead). A drained session takes no new streams and
// closes once the ones it carries end (client certificate rotation: the client ends the watches on it
// and lets its requests finish).
import { connect as http2Connect, constants as h2, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders as H2Headers } from 'node:http2';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { connect as tlsConnect, type SecureContext } from 'node:tls';
import type { EventEmitter } from 'node:events';
import { TransportError } from './api-error.js';

/** What a response body is read through: an IncomingMessage (HTTP/1.1) or an HTTP/2 stream. */
export interface BodyStream extends EventEmitter {
  destroy(): void;
}

export interface ApiResponse {
  readonly status: number;
  header(name: string): string | undefined;
  readonly body: BodyStream;
  /** The whole body arrived (not cut). */
  readonly complete: boolean;
}

export interface ApiExchange {
  /** The response headers; rejects with a TransportError when no answer came. */
  readonly response: Promise<ApiResponse>;
  /** Ends it now (deadline, given up, watch stopped): the stream is reset, the connection stays. */
  cancel(): void;
}

export interface SendOptions {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** Open a new connection for this one (the current one drains). */
  fresh?: boolean;
}

export interface ConnectionTls {
  secureContext: SecureContext;
  /** tls-server-name of the kubeconfig, if any. */
  servername?: string;
}

/** A TLS handshake that has not finished in this long is given up (a SYN that is never answered). */
const CONNECT_TIMEOUT_MS = 5000;

export type Protocol = 'h2' | 'http/1.1';

export class ApiConnection {
  private session: ClientHttp2Session | undefined;
  private connecting: Promise<ClientHttp2Session | 'http/1.1'> | undefined;
  private connectingSocket: { destroy(): void } | undefined;
  /** Sessions that take no new streams and close when theirs end. */
  private readonly draining = new Set<ClientHttp2Session>();
  private negotiated: Protocol | undefined;
  private h1Agent: Agent | undefined;
  private closed = false;

  constructor(
    private readonly origin: URL,
    private readonly tls: ConnectionTls,
    /** Sockets of the HTTP/1.1 fallback. */
    private readonly maxSockets: number,
  ) {}

  /** What the server spoke on the last connection, once known. */
  get protocol(): Protocol | undefined {
    return this.negotiated;
  }

  send(o: SendOptions): ApiExchange {
    let cancelled = false;
    let cancelNow: () => void = () => {};
    const response = (async (): Promise<ApiResponse> => {
      const session = await this.sessionFor(o.fresh === true);
      if (cancelled) throw new TransportError('reset', 'given up before it was sent');
      if (session === 'http/1.1') return this.sendHttp1(o, (c) => (cancelNow = c));
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
    for (const list of Object.values(this.h1Agent?.freeSockets ?? {})) for (const s of list ?? []) s.destroy();
  }

  /** No new streams here; what is in flight finishes, then the connection closes. */
  drain(): void {
    this.closed = true;
    if (this.session) this.retire(this.session);
    this.session = undefined;
    if (this.h1Agent) {
      this.h1Agent.keepSocketAlive = () => false;
      for (const list of Object.values(this.h1Agent.freeSockets)) for (const s of list ?? []) s.destroy();
    }
  }

  /** Whether anything still runs on it (a drained connection can be forgotten once this is false). */
  get busy(): boolean {
    return this.session !== undefined || this.connecting !== undefined || this.draining.size > 0 || Object.keys(this.h1Agent?.sockets ?? {}).length > 0;
  }

  destroy(): void {
    this.closed = true;
    this.reset();
    for (const s of this.draining) s.destroy();
    this.draining.clear();
    this.h1Agent?.destroy();
  }

  private retire(session: ClientHttp2Session): void {
    if (session.destroyed) return;
    this.draining.add(session);
    session.close(() => this.draining.delete(session));
  }

  private sessionFor(fresh: boolean): Promise<ClientHttp2Session | 'http/1.1'> {
    if (this.closed) return Promise.reject(new TransportError('other', 'client closed'));
    if (this.negotiated === 'http/1.1') return Promise.resolve('http/1.1');
    if (fresh && this.session) {
      this.retire(this.session);
      this.session = undefined;
    }
    const s = this.session;
    if (s && !s.closed && !s.destroyed) return Promise.resolve(s);
    this.session = undefined;
    if (fresh || !this.connecting) {
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
      const socket = tlsConnect({ host, port, servername, secureContext: this.tls.secureContext, ALPNProtocols: ['h2', 'http/1.1'], rejectUnauthorized: true });
      this.connectingSocket = socket;
      const timer = setTimeout(() => fail(new TransportError('timeout', `connect ${this.origin.host}: no TLS handshake within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      const fail = (e: unknown): void => {
        clearTimeout(timer);
        if (this.connectingSocket === socket) this.connectingSocket = undefined;
        socket.destroy();
        reject(TransportError.from(e));
      };
      socket.once('error', fail);
      socket.once('close', () => fail(new TransportError('reset', `connect ${this.origin.host}: closed during the TLS handshake`)));
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('close');
        socket.off('error', fail);
        if (this.connectingSocket === socket) this.connectingSocket = undefined;
        if (this.closed) {
          socket.destroy();
          return reject(new TransportError('other', 'client closed'));
        }
        if (socket.alpnProtocol !== 'h2') {
          // The server does not speak HTTP/2: this handshake is spent, the agent makes its own.
          this.negotiated = 'http/1.1';
          socket.destroy();
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

  private sendHttp1(o: SendOptions, onCancel: (c: () => void) => void): Promise<ApiResponse> {
    this.h1Agent ??= new Agent({
      secureContext: this.tls.secureContext,
      servername: this.tls.servername,
      rejectUnauthorized: true,
      keepAlive: true,
      maxSockets: this.maxSockets,
      maxFreeSockets: this.maxSockets,
      scheduling: 'lifo',
    });
    return new Promise((resolve, reject) => {
      const req = httpsRequest(o.url, { method: o.method, headers: o.headers, agent: this.h1Agent, servername: this.tls.servername }, (res: IncomingMessage) =>
        resolve({
          status: res.statusCode ?? 0,
          header: (name) => first(res.headers[name]),
          body: res,
          get complete() {
            return res.complete;
          },
        }),
      );
      onCancel(() => req.destroy());
      req.on('error', (e) => reject(TransportError.from(e)));
      req.end(o.body);
    });
  }
}

/** Open streams per session: a session with none lets the process exit, as idle keep-alive sockets do. */
const openStreams = new WeakMap<ClientHttp2Session, number>();

function sendHttp2(session: ClientHttp2Session, o: SendOptions, onCancel: (c: () => void) => void): Promise<ApiResponse> {
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
    stream.once('close', () => reject(new TransportError('reset', `stream closed before an answer (HTTP/2 code ${stream.rstCode ?? 'none'})`)));
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

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
