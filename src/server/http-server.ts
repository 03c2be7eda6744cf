// A small read-only HTTP server: GET routes answered from in-memory state, so a request never
// waits on the runtime or the sync loop. Binding it is the listeners' job (tcp-listener.ts,
// pods-socket.ts).
import * as http from 'node:http';
import type { Logger } from '../log/logger.js';
import { isAllowedHost, type RefusalLog } from './host-check.js';
import { errorMessage } from '../util/error-message.js';

export interface RouteResult {
  readonly statusCode: number;
  readonly contentType: string;
  readonly body: string;
}

/** Answers a path (without query) or returns undefined for 404; /metrics answers asynchronously. */
export type Router = (path: string, query: URLSearchParams) => RouteResult | Promise<RouteResult> | undefined;

const TEXT = 'text/plain; charset=utf-8';
const FOREIGN_HOST_BODY = 'forbidden: this endpoint answers only requests to localhost, 127.0.0.1 or [::1]\n';

function handle(
  router: Router,
  logger: Logger,
  hostCheck: RefusalLog | undefined,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  if (hostCheck && !isAllowedHost(req.headers.host, req.httpVersion, req.socket.localAddress)) {
    hostCheck.refused(req.headers.host, req.socket.remoteAddress);
    res
      .writeHead(403, {
        'Content-Type': TEXT,
        'Content-Length': Buffer.byteLength(FOREIGN_HOST_BODY),
        Connection: 'close',
      })
      .end(FOREIGN_HOST_BODY);
    return;
  }
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'Content-Type': TEXT, Allow: 'GET, HEAD' }).end('method not allowed\n');
    return;
  }
  const failed = (err: unknown): RouteResult => {
    logger.error('HTTP handler failed', { path: url.pathname, err: errorMessage(err) });
    return { statusCode: 500, contentType: TEXT, body: 'internal error\n' };
  };
  const send = (result: RouteResult | undefined): void => {
    const r = result ?? { statusCode: 404, contentType: TEXT, body: '404 page not found\n' };
    res.writeHead(r.statusCode, { 'Content-Type': r.contentType, 'Content-Length': Buffer.byteLength(r.body) });
    res.end(req.method === 'HEAD' ? undefined : r.body);
  };
  let result: RouteResult | Promise<RouteResult> | undefined;
  try {
    result = router(url.pathname, url.searchParams);
  } catch (err) {
    result = failed(err);
  }
  if (result instanceof Promise) result.then(send, (err: unknown) => send(failed(err)));
  else send(result);
}

/**
 * @param hostCheck refuse (and count) requests whose Host is not loopback; undefined for the
 *   unix socket, which file permissions protect and no browser can reach
 */
export function createHttpServer(router: Router, logger: Logger, hostCheck?: RefusalLog): http.Server {
  const server = http.createServer((req, res) => handle(router, logger, hostCheck, req, res));
  // Idle keep-alive connections must not hold shutdown up.
  server.keepAliveTimeout = 5_000;
  // Errors after binding (accept failing under EMFILE) must not become an uncaught 'error' event;
  // libuv keeps accepting once descriptors are free again.
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (server.listening) logger.v(2).info('Local endpoint error', { err: err.message });
  });
  return server;
}

/** One listen attempt; on failure the server is left unbound, to be tried again later. */
export function listenOnce(
  server: http.Server,
  options: { host: string; port: number } | { path: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(options);
  });
}

/** Stops listening and drops open connections. */
export function closeHttpServer(server: http.Server): Promise<void> {
  return new Promise<void>((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });
}
