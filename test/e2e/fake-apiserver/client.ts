import { connect, type ClientHttp2Session } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import type { FakeApiServer, Json, KeyPair } from '../../support/fake-apiserver/index.js';

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, unknown> & { metadata?: Record<string, unknown> };
}

export interface RequestOptions {
  body?: Json;
  contentType?: string;
  accept?: string;
  headers?: Record<string, string>;
}

/** A small API client for tests: HTTP/2 (as kubectl) or HTTP/1.1, with a client cert or token or nothing. */
export class TestClient {
  private session: ClientHttp2Session | undefined;

  constructor(
    private readonly server: FakeApiServer,
    private readonly creds: { cert?: KeyPair; token?: string } = {},
    private readonly protocol: 'h2' | 'h1' = 'h2',
  ) {}

  static forUser(server: FakeApiServer, user: string, groups: string[], protocol: 'h2' | 'h1' = 'h2'): TestClient {
    return new TestClient(server, { cert: server.issueClientCert(user, groups) }, protocol);
  }

  close(): void {
    this.session?.destroy();
    this.session = undefined;
  }

  private h2(): ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const s = connect(this.server.url, {
      ca: this.server.caPem,
      cert: this.creds.cert?.certPem,
      key: this.creds.cert?.keyPem,
    });
    s.on('error', () => undefined);
    this.session = s;
    return s;
  }

  private headers(opts: RequestOptions): Record<string, string> {
    const h: Record<string, string> = { accept: opts.accept ?? 'application/json', ...(opts.headers ?? {}) };
    if (this.creds.token) h.authorization = `Bearer ${this.creds.token}`;
    if (opts.body !== undefined) h['content-type'] = opts.contentType ?? 'application/json';
    return h;
  }

  request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    return this.protocol === 'h2' ? this.viaH2(method, path, opts, payload) : this.viaH1(method, path, opts, payload);
  }

  private viaH2(method: string, path: string, opts: RequestOptions, payload: string | undefined): Promise<Response> {
    return new Promise((resolve, reject) => {
      const stream = this.h2().request(
        { ':method': method, ':path': path, ...this.headers(opts) },
        { endStream: payload === undefined },
      );
      let status = 0;
      let headers: Response['headers'] = {};
      let text = '';
      stream.on('response', (h) => {
        status = Number(h[':status']);
        headers = h as Response['headers'];
      });
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (text += d));
      stream.on('end', () =>
        status ? resolve(toResponse(status, headers, text)) : reject(new Error('stream ended without a response')),
      );
      stream.on('close', () => {
        if (!status) reject(new Error('stream closed without a response'));
      });
      stream.on('error', reject);
      stream.end(payload);
    });
  }

  private viaH1(method: string, path: string, opts: RequestOptions, payload: string | undefined): Promise<Response> {
    const url = new URL(path, this.server.url);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        url,
        {
          method,
          headers: this.headers(opts),
          ca: this.server.caPem,
          cert: this.creds.cert?.certPem,
          key: this.creds.cert?.keyPem,
          agent: false,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve(toResponse(res.statusCode ?? 0, res.headers, text)));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  get(path: string, opts?: RequestOptions): Promise<Response> {
    return this.request('GET', path, opts);
  }
  post(path: string, body: Json): Promise<Response> {
    return this.request('POST', path, { body });
  }
  put(path: string, body: Json): Promise<Response> {
    return this.request('PUT', path, { body });
  }
  patch(path: string, body: Json, contentType: string): Promise<Response> {
    return this.request('PATCH', path, { body, contentType });
  }
  delete(path: string, body?: Json): Promise<Response> {
    return this.request('DELETE', path, { body });
  }

  /** Opens a watch stream; events accumulate in `events` until close(). */
  watch(path: string): WatchStream {
    const stream = this.h2().request({ ':method': 'GET', ':path': path, ...this.headers({}) });
    return new WatchStream(stream);
  }
}

export interface WatchEvent {
  type: string;
  object: { kind?: string; metadata?: Record<string, unknown>; [k: string]: unknown };
}

export class WatchStream {
  readonly events: WatchEvent[] = [];
  status = 0;
  ended = false;
  private buf = '';

  constructor(private readonly stream: ReturnType<ClientHttp2Session['request']>) {
    stream.on('response', (h) => (this.status = Number(h[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (d: string) => {
      this.buf += d;
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i).trim();
        this.buf = this.buf.slice(i + 1);
        if (line) this.events.push(JSON.parse(line) as WatchEvent);
      }
    });
    stream.on('end', () => (this.ended = true));
    stream.on('close', () => (this.ended = true));
    stream.on('error', () => (this.ended = true));
  }

  close(): void {
    this.stream.close();
  }
}

function toResponse(status: number, headers: Response['headers'], text: string): Response {
  let json: Response['json'] = {};
  try {
    json = JSON.parse(text) as Response['json'];
  } catch {
    /* not JSON (health endpoints) */
  }
  return { status, headers, text, json };
}
