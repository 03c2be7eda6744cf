// Proxies an upgraded connection (SPDY or WebSocket) to the runtime's streaming server, as the
// kubelet's proxyStream does with an upgrade-aware handler: the request goes to the URL the CRI
// call returned (its one-time token is the whole authority, so the client's query is not passed
// on, nor its credentials); a 101 answer is relayed and from then on bytes are copied both ways
// until either side ends, with back-pressure (pipe); any other answer is relayed as it is. The
// protocol inside is between the client and the runtime: nothing here frames SPDY or WebSocket.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { rawReply } from './raw-reply.js';

/** The runtime answers an upgrade at once; this only guards against a hung streaming server. */
const RUNTIME_ANSWER_TIMEOUT_MS = 30_000;

/** Headers that only concern the hop to us, or that carry the caller's credentials. */
const DROPPED = new Set([
  'host',
  'authorization',
  'proxy-authorization',
  'cookie',
  'proxy-connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'content-length',
]);

export interface ProxyResult {
  /** 101 when the stream was established; the runtime's status otherwise. */
  statusCode: number;
  /** Resolves when the proxied stream has ended (both sides closed). */
  ended: Promise<void>;
}

function forwardHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const value = req.rawHeaders[i + 1]!;
    if (DROPPED.has(name.toLowerCase())) continue;
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

function headBlock(res: IncomingMessage): Buffer {
  const lines = [`HTTP/1.1 ${res.statusCode ?? 502} ${res.statusMessage ?? ''}`];
  for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
  return Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
}

/** After one side has closed, how long the other may take to flush and close before it is cut. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Joins two sockets: whatever one sends the other gets (pipe, with back-pressure). When one side
 * ends, the other is ended after what was sent to it is flushed (a destroy would drop the last
 * frames, e.g. an exec's exit status); a side that fails takes both down.
 */
function splice(a: Duplex, b: Duplex): Promise<void> {
  return new Promise((resolve) => {
    let closed = 0;
    let grace: NodeJS.Timeout | undefined;
    const onClose = (other: Duplex) => (): void => {
      other.end();
      if (++closed === 2) {
        clearTimeout(grace);
        resolve();
        return;
      }
      grace = setTimeout(() => other.destroy(), CLOSE_GRACE_MS);
      grace.unref();
    };
    const fail = (): void => {
      a.destroy();
      b.destroy();
    };
    a.on('error', fail);
    b.on('error', fail);
    a.once('close', onClose(b));
    b.once('close', onClose(a));
    a.pipe(b);
    b.pipe(a);
  });
}

/** TLS towards the upstream (the fake API server reuses this to reach the kubelet with its client certificate). */
export interface UpstreamTls {
  cert?: string;
  key?: string;
  ca?: string;
  rejectUnauthorized?: boolean;
}

export function proxyUpgrade(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  runtimeUrl: URL,
  tls: UpstreamTls = {},
): Promise<ProxyResult> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (r: ProxyResult): void => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const send = runtimeUrl.protocol === 'https:' ? httpsRequest : httpRequest;
    const upstream = send(runtimeUrl, {
      method: req.method,
      headers: forwardHeaders(req),
      agent: false,
      timeout: RUNTIME_ANSWER_TIMEOUT_MS,
      ...tls,
    });
    upstream.on('upgrade', (res, runtimeSocket, runtimeHead) => {
      upstream.setTimeout(0);
      runtimeSocket.setTimeout(0);
      client.write(headBlock(res));
      if (runtimeHead.length > 0) client.write(runtimeHead);
      if (head.length > 0) runtimeSocket.write(head);
      settle({ statusCode: 101, ended: splice(client, runtimeSocket) });
    });
    upstream.on('response', (res) => {
      // Not upgraded (a WebSocket protocol the runtime does not speak, an expired token): relay it.
      client.write(headBlock(res));
      res.pipe(client);
      const ended = new Promise<void>((done) => {
        res.on('end', () => {
          client.end();
          done();
        });
        res.on('error', () => {
          client.destroy();
          done();
        });
      });
      settle({ statusCode: res.statusCode ?? 502, ended });
    });
    upstream.on('timeout', () =>
      upstream.destroy(
        new Error(`the runtime's streaming server did not answer within ${RUNTIME_ANSWER_TIMEOUT_MS / 1000}s`),
      ),
    );
    upstream.on('error', (err) => {
      if (settled) return;
      rawReply(client, 500, `error dialing the runtime's streaming server: ${err.message}\n`);
      settle({ statusCode: 500, ended: Promise.resolve() });
    });
    client.on('error', () => upstream.destroy());
    upstream.end();
  });
}
