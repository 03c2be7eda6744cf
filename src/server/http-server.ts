// A small read-only HTTP server: GET routes answered from in-memory state, so a request never
// waits on the runtime or the sync loop. Failing to listen is one clear error naming the port.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log/logger.js';

export interface RouteResult {
  readonly statusCode: number;
  readonly contentType: string;
  readonly body: string;
}

/** Answers a path (without query) or returns undefined for 404. */
export type Router = (path: string, query: URLSearchParams) => RouteResult | undefined;

export class ServerStartError extends Error {
  override name = 'ServerStartError';
}

export interface ListeningServer {
  /** `http://host:port` actually bound (the port is real even when 0 was asked for). */
  readonly url: string;
  close(): Promise<void>;
}

function describeListenError(err: NodeJS.ErrnoException, what: string, host: string, port: number): string {
  const where = `${host}:${port}`;
  if (err.code === 'EADDRINUSE') return `cannot serve ${what} on ${where}: the address is already in use (is another kubelet or bootlet running?)`;
  if (err.code === 'EACCES') return `cannot serve ${what} on ${where}: permission denied`;
  if (err.code === 'EADDRNOTAVAIL') return `cannot serve ${what} on ${where}: the address is not on this host`;
  return `cannot serve ${what} on ${where}: ${err.message}`;
}

function handle(router: Router, logger: Logger, req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'Content-Type': 'text/plain; charset=utf-8', Allow: 'GET, HEAD' }).end('method not allowed\n');
    return;
  }
  let result: RouteResult | undefined;
  try {
    result = router(url.pathname, url.searchParams);
  } catch (err) {
    logger.error('HTTP handler failed', { path: url.pathname, err: err instanceof Error ? err.message : String(err) });
    result = { statusCode: 500, contentType: 'text/plain; charset=utf-8', body: 'internal error\n' };
  }
  if (!result) result = { statusCode: 404, contentType: 'text/plain; charset=utf-8', body: '404 page not found\n' };
  res.writeHead(result.statusCode, { 'Content-Type': result.contentType, 'Content-Length': Buffer.byteLength(result.body) });
  res.end(req.method === 'HEAD' ? undefined : result.body);
}

/**
 * @param what the endpoint in words for errors ("the read-only port (--read-only-port)")
 */
export function listen(router: Router, host: string, port: number, what: string, logger: Logger): Promise<ListeningServer> {
  const server = http.createServer((req, res) => handle(router, logger, req, res));
  // Idle keep-alive connections must not hold shutdown up.
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new ServerStartError(describeListenError(err, what, host, port))));
    server.listen({ host, port }, () => {
      const addr = server.address() as AddressInfo;
      const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve({
        url: `http://${shownHost}:${addr.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
