// The HTTP/1.1 fallback of a client's connection, for a server (or a load balancer in front of it)
// that offers no h2. HTTP/1.1 carries one request at a time per connection, and a watch holds its
// connection for 5–10 min, so watches and short requests must not share a capped pool: with 8 sockets
// for everything, 8 watches (the pods, the Services, one per referenced ConfigMap or Secret, a CSR)
// left the Lease renewal, the status patches and the probe queued behind them until the node went
// NotReady. client-go's transport has no cap on connections per host (transport/cache.go sets only
// 25 idle ones), so over HTTP/1.1 each of its watches has a connection of its own. Here likewise:
// watches on a pool without a cap, each on its own connection, kept alive so that the next watch of a
// reflector takes the connection its last one ended on; short requests (reads, writes, the probe) on
// a small keep-alive pool of their own, which no watch can fill.
//
// A connection whose handshake the client made itself to find out what the server speaks (ALPN) is
// not wasted: the next request that needs a new connection, on either pool, takes it.
import type { Duplex } from 'node:stream';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { TransportError } from './api-error.js';
import { first, type ApiResponse, type ConnectionTls, type SendOptions } from './exchange.js';

/** Idle watch connections kept for the next watches, as client-go keeps 25 idle connections per host. */
const IDLE_WATCH_CONNECTIONS = 25;

export class Http1Pools {
  private readonly watches: Agent;
  private readonly requests: Agent;
  /** A negotiated connection no request has taken yet. */
  private spare: TLSSocket | undefined;

  constructor(
    private readonly tls: ConnectionTls,
    /** Connections of the short requests' pool. */
    maxSockets: number,
  ) {
    this.watches = this.agent(Infinity, IDLE_WATCH_CONNECTIONS);
    this.requests = this.agent(maxSockets, maxSockets);
  }

  private agent(maxSockets: number, maxFreeSockets: number): Agent {
    const agent = new Agent({
      secureContext: this.tls.secureContext,
      servername: this.tls.servername,
      rejectUnauthorized: true,
      keepAlive: true,
      maxSockets,
      maxFreeSockets,
      scheduling: 'lifo',
    });
    const connect = agent.createConnection.bind(agent);
    agent.createConnection = (options, callback): Duplex | null | undefined =>
      this.takeSpare() ?? connect(options, callback);
    return agent;
  }

  /** A connection the client negotiated http/1.1 on: the next request that needs a connection takes it. */
  adopt(socket: TLSSocket): void {
    this.spare?.destroy();
    this.spare = socket;
    // Idle, it must not keep the process alive (the pools' idle connections do not either).
    socket.unref();
    socket.once('close', () => {
      if (this.spare === socket) this.spare = undefined;
    });
    // An error on an idle connection is its close; nobody is waiting on it yet.
    socket.on('error', () => undefined);
  }

  private takeSpare(): TLSSocket | undefined {
    const s = this.spare;
    this.spare = undefined;
    if (!s || s.destroyed) return undefined;
    s.ref();
    return s;
  }

  /**
   * Connections open (busy or idle, the spare included): 0 means the next request opens a new one. A
   * connection the server closed may stay listed for a moment after it closed, so only live ones count.
   */
  get open(): number {
    return (
      count(this.watches.sockets) +
      count(this.watches.freeSockets) +
      count(this.requests.sockets) +
      count(this.requests.freeSockets) +
      (this.spare ? 1 : 0)
    );
  }

  /** Connections carrying a request or a watch now. */
  get busy(): number {
    return count(this.watches.sockets) + count(this.requests.sockets);
  }

  /** Whether a short request sent now finds a connection without a new handshake. */
  get idleForRequest(): boolean {
    return this.spare !== undefined || count(this.requests.freeSockets) > 0;
  }

  send(o: SendOptions, onCancel: (c: () => void) => void): Promise<ApiResponse> {
    const agent = o.watch ? this.watches : this.requests;
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        o.url,
        { method: o.method, headers: o.headers, agent, servername: this.tls.servername },
        (res: IncomingMessage) =>
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

  /** Idle connections may be dead (the server stopped answering): none is used again. */
  closeIdle(): void {
    for (const agent of [this.watches, this.requests])
      for (const list of Object.values(agent.freeSockets)) for (const s of list ?? []) s.destroy();
    this.spare?.destroy();
    this.spare = undefined;
  }

  /** No connection is kept once its request ends; the idle ones close now. */
  drain(): void {
    for (const agent of [this.watches, this.requests]) agent.keepSocketAlive = () => false;
    this.closeIdle();
  }

  destroy(): void {
    this.closeIdle();
    this.watches.destroy();
    this.requests.destroy();
  }
}

function count(sockets: NodeJS.ReadOnlyDict<{ destroyed: boolean }[]>): number {
  let n = 0;
  for (const list of Object.values(sockets)) for (const s of list ?? []) if (!s.destroyed) n++;
  return n;
}
