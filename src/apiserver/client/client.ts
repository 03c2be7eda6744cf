// A thin typed REST client for the few API calls a node agent makes. Every request, watch and
// probe goes over one connection (api-connection.ts: one HTTP/2 session; when the server does not
// offer h2, HTTP/1.1 with a connection per watch and a small pool for the rest), as client-go
// multiplexes them; a hung or cut request is one stream reset alone, and a deadline on every request
// means a server that never answers costs a timer, not a stuck caller.
import { createSecureContext } from 'node:tls';
import { readFileSync } from 'node:fs';
import type { DeleteOptions } from 'kubernetes-types/meta/v1';
import { ApiConnection } from './api-connection.js';
import type { ApiResponse, Protocol } from './exchange.js';
import { ApiError, TransportError } from './api-error.js';
import type { ClusterConnection, TlsKeyPair } from './kubeconfig.js';
import { recordRequestResult } from './request-metrics.js';
import {
  MAX_RESPONSE_BYTES,
  readBody,
  RESPONSE_TOO_LARGE,
  responseTooLarge,
  WatchLineSplitter,
} from './response-body.js';
import { errorMessage } from '../../util/error-message.js';

export type PatchType = 'merge' | 'strategic' | 'json';

const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  contentType?: string;
  /** Overrides the client's deadline for this request. */
  timeoutMs?: number;
  /**
   * Sent on a new connection; the current one drains (a reachability probe sent while the last one
   * is unanswered: that connection may be dead).
   */
  freshConnection?: boolean;
  /** Its outcome is not reported to the observer: the caller judges it (the reachability probe). */
  unobserved?: boolean;
}

export interface ClientOptions {
  /** Whole-request deadline; default 10 s. */
  timeoutMs?: number;
  userAgent?: string;
  /**
   * Connections for requests (not watches) to a server that speaks only HTTP/1.1; default 8 (HTTP/2
   * needs one connection). Each watch has its own there, as client-go's have.
   */
  maxSockets?: number;
  /** A response body longer than this is refused (ResponseTooLarge); default MAX_RESPONSE_BYTES (64 MiB). */
  maxResponseBytes?: number;
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: T;
}

export interface WatchHandle {
  /** Settles when the stream ends: resolved on a clean end or stop(), rejected on a failure (incl. 410 Expired). */
  readonly done: Promise<void>;
  stop(): void;
}

const TOKEN_FILE_REREAD_MS = 60_000;

interface Link {
  pair: TlsKeyPair | undefined;
  connection: ApiConnection;
  /** The watches open on this connection, each with the way to end it as a server's timeout does. */
  watches: Set<() => void>;
}

export class ApiClient {
  private link: Link;
  /** Connections of an earlier client certificate, draining: their streams finish, then they close. */
  private retired: ApiConnection[] = [];
  /** Requests waiting for an answer (not watches), each with the way to give it up. */
  private readonly inFlight = new Set<(why: string) => void>();
  private readonly staticPair: TlsKeyPair | undefined;
  private readonly maxSockets: number;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly userAgent: string;
  private tokenCache: { value: string; readAt: number } | undefined;
  private observer: (e?: unknown) => void = () => {};
  private closed = false;

  constructor(
    private readonly conn: ClusterConnection,
    opts: ClientOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxResponseBytes = opts.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.userAgent = opts.userAgent ?? 'bootlet';
    this.maxSockets = opts.maxSockets ?? 8;
    this.staticPair = conn.cert && conn.key ? { cert: conn.cert, key: conn.key } : undefined;
    this.link = this.makeLink(conn.clientCertificate ? conn.clientCertificate.current() : this.staticPair);
  }

  private makeLink(pair: TlsKeyPair | undefined): Link {
    // One context per credential set, shared by every connection: building one parses the CA and the
    // key (~1.5 ms), which each new connection (and each probe of an absent server) would repeat.
    const secureContext = createSecureContext({ ca: this.conn.ca, cert: pair?.cert, key: pair?.key });
    return {
      pair,
      connection: new ApiConnection(
        new URL(this.conn.server),
        { secureContext, servername: this.conn.tlsServerName },
        this.maxSockets,
      ),
      watches: new Set(),
    };
  }

  /**
   * The connection for a new request. When the client certificate changed, new requests go over a
   * new connection that presents it, and the old one closes, as client-go closes its connections on
   * rotation: it takes nothing new, its watches end as at their timeout (their owners watch again from
   * their resourceVersion, on the new connection), and the requests in flight finish there within their
   * deadline rather than fail, as client-go's would.
   */
  private current(): ApiConnection {
    const source = this.conn.clientCertificate;
    if (!source || this.closed) return this.link.connection;
    const pair = source.current();
    if (pair === this.link.pair) return this.link.connection;
    const old = this.link;
    old.connection.drain();
    this.retired = this.retired.filter((c) => c.busy);
    this.retired.push(old.connection);
    this.link = this.makeLink(pair);
    for (const end of [...old.watches]) end();
    return this.link.connection;
  }

  /** What the server speaks on the connection: 'h2', 'http/1.1', or undefined before the first one. */
  get protocol(): Protocol | undefined {
    return this.link.connection.protocol;
  }

  /** Whether a request sent now would open a new TLS connection (the probe paces those while a server hangs). */
  get needsHandshake(): boolean {
    return this.current().needsHandshake;
  }

  /** Hears every outcome: undefined for an answer, else the error (Connectivity listens here). */
  observe(fn: (e?: unknown) => void): void {
    this.observer = fn;
  }

  get server(): string {
    return this.conn.server;
  }

  /** host[:port] of the server, the `host` label of rest_client_requests_total. */
  private get host(): string {
    try {
      return new URL(this.conn.server).host;
    } catch {
      return this.conn.server;
    }
  }

  /**
   * Gives up every request still waiting for an answer, and the idle connections: the server has
   * let one request time out, so the others on it are likely hung too (a server that accepts and
   * never answers). They fail now, as "reset", and are sent again once the server answers, instead
   * of each waiting out its own 10 s. The kubelet closes all its connections for the same reason.
   */
  abandonInFlight(why: string): void {
    for (const give of [...this.inFlight]) give(why);
    this.link.connection.reset();
  }

  close(): void {
    this.closed = true;
    for (const c of [this.link.connection, ...this.retired]) c.destroy();
    this.retired = [];
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path, { query });
  }
  list<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path, { query });
  }
  create<T>(path: string, body: T): Promise<T> {
    return this.request<T>('POST', path, { body });
  }
  update<T>(path: string, body: T): Promise<T> {
    return this.request<T>('PUT', path, { body });
  }
  patch<T>(path: string, type: PatchType, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, { body, contentType: PATCH_CONTENT_TYPE[type] });
  }
  delete<T>(path: string, options?: DeleteOptions): Promise<T> {
    return this.request<T>('DELETE', path, {
      body: options ? { kind: 'DeleteOptions', apiVersion: 'v1', ...options } : undefined,
    });
  }

  request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.userAgent };
    if (payload !== undefined) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    this.authorize(headers);
    const deadline = opts.timeoutMs ?? this.timeoutMs;
    return new Promise<T>((resolve, reject) => {
      if (this.closed) return reject(new TransportError('other', 'client closed'));
      let settled = false;
      let answeredCode: number | undefined;
      const finish = (err: Error | undefined, value?: T): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        recordRequestResult(answeredCode, method, this.host);
        this.inFlight.delete(abandon);
        if (!opts.unobserved) this.observer(answered(err) ? undefined : err);
        if (err) reject(err);
        else resolve(value as T);
      };
      const exchange = this.current().send({
        method,
        url: this.url(path, opts.query),
        headers,
        body: payload,
        fresh: opts.freshConnection,
      });
      const abandon = (why: string): void => {
        finish(new TransportError('reset', `${method} ${path}: given up, ${why}`));
        exchange.cancel();
      };
      const timer = setTimeout(() => {
        finish(new TransportError('timeout', `${method} ${path}: no answer within ${deadline} ms`));
        exchange.cancel();
      }, deadline);
      this.inFlight.add(abandon);
      exchange.response
        .then(async (res) => {
          answeredCode = res.status;
          const { text, truncated } = await readBody(res.body, this.maxResponseBytes);
          const code = res.status;
          if (code >= 200 && code < 300) {
            if (truncated) return finish(responseTooLarge(`${method} ${path}`, this.maxResponseBytes));
            try {
              finish(undefined, (text ? JSON.parse(text) : undefined) as T);
            } catch (e) {
              finish(new ApiError(code, 'InvalidResponse', `response is not JSON: ${errorMessage(e)}`));
            }
          } else finish(ApiError.fromResponse(code, text, res.header('retry-after')));
        })
        .catch((e: unknown) => finish(TransportError.from(e)));
    });
  }

  /**
   * Opens a watch. It may stay open for `timeoutSeconds` (asked of the server) plus a margin, then it
   * is cut client-side in case the connection died silently. There is no deadline on the response
   * headers: a server may hold them until the first event. A watch that waits blocks nothing, and
   * the owner restarts it whenever the server comes back after an outage.
   */
  watch<T>(path: string, query: Query, onEvent: (e: WatchEvent<T>) => void): WatchHandle {
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.userAgent };
    this.authorize(headers);
    const serverTimeout = Number(query.timeoutSeconds ?? 0);
    let stop: () => void = () => {};
    let stopped = false;
    const done = new Promise<void>((resolve, reject) => {
      let settled = false;
      let gotResponse = false;
      let body: ApiResponse['body'] | undefined;
      const finish = (err?: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(lifeTimer);
        link.watches.delete(endNow);
        exchange.cancel();
        body?.destroy();
        if (err && !stopped) this.observer(answered(err) ? undefined : err);
        if (err) reject(err);
        else resolve();
      };
      stop = () => {
        stopped = true;
        finish();
      };
      if (this.closed) {
        settled = true; // stop() has nothing to end
        return reject(new TransportError('other', 'client closed'));
      }
      const connection = this.current();
      const link = this.link;
      const endNow = (): void => finish();
      link.watches.add(endNow);
      const exchange = connection.send({
        method: 'GET',
        url: this.url(path, { ...query, watch: 1 }),
        headers,
        watch: true,
      });
      const lifeTimer = serverTimeout > 0 ? setTimeout(() => finish(), (serverTimeout + 30) * 1000) : undefined;
      exchange.response.then(
        (res) => {
          if (settled) return res.body.destroy();
          const code = res.status;
          gotResponse = true;
          recordRequestResult(code, 'GET', this.host);
          if (code === 200) this.observer(undefined);
          if (code !== 200) {
            readBody(res.body, this.maxResponseBytes)
              .then(({ text }) => finish(ApiError.fromResponse(code, text, res.header('retry-after'))))
              .catch((e: unknown) => finish(TransportError.from(e)));
            return;
          }
          body = res.body;
          const lines = new WatchLineSplitter(`watch ${path}`);
          res.body.on('data', (chunk: Buffer) => {
            if (settled) return;
            let complete: string[];
            try {
              complete = lines.push(chunk);
            } catch (e) {
              return finish(e as Error);
            }
            for (const raw of complete) {
              const line = raw.trim();
              if (!line || settled) continue;
              let ev: { type?: string; object?: unknown };
              try {
                ev = JSON.parse(line) as { type?: string; object?: unknown };
              } catch {
                return finish(new TransportError('other', 'watch stream: bad JSON line'));
              }
              if (ev.type === 'ERROR') {
                const s = ev.object as { code?: number; reason?: string; message?: string } | undefined;
                return finish(new ApiError(s?.code ?? 500, s?.reason ?? '', s?.message ?? 'watch error'));
              }
              if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED' || ev.type === 'BOOKMARK') {
                try {
                  onEvent({ type: ev.type, object: ev.object as T });
                } catch (e) {
                  return finish(e as Error);
                }
              }
            }
          });
          res.body.on('end', () => finish());
          res.body.on('aborted', () => finish(new TransportError('reset', 'watch stream cut')));
          res.body.on('error', (e: unknown) => finish(TransportError.from(e)));
          res.body.on('close', () =>
            finish(res.complete ? undefined : new TransportError('reset', 'watch stream cut')),
          );
        },
        (e: unknown) => {
          if (!gotResponse && !settled) recordRequestResult(undefined, 'GET', this.host);
          finish(TransportError.from(e));
        },
      );
    });
    return { done, stop: () => stop() };
  }

  private url(path: string, query?: Query): URL {
    const u = new URL(this.conn.server + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  private authorize(headers: Record<string, string>): void {
    const token = this.bearerToken();
    if (token) headers.Authorization = `Bearer ${token}`;
  }

  /** A token file is re-read now and then: the token in it may be rotated under us. */
  private bearerToken(): string | undefined {
    const file = this.conn.tokenFile;
    if (!file) return this.conn.token;
    const now = Date.now();
    if (!this.tokenCache || now - this.tokenCache.readAt > TOKEN_FILE_REREAD_MS) {
      try {
        this.tokenCache = { value: readFileSync(file, 'utf8').trim(), readAt: now };
      } catch {
        // keep the last token we had; the server will say 401 if it is stale
        if (!this.tokenCache) return this.conn.token;
      }
    }
    return this.tokenCache.value || this.conn.token;
  }
}

/** An answer that did not parse or was too large is still an answer: the server is there (e.g. /readyz says "ok"). */
export function answered(err: unknown): boolean {
  return err instanceof ApiError && (err.reason === 'InvalidResponse' || err.reason === RESPONSE_TOO_LARGE);
}
