import type { IncomingHttpHeaders } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Json } from './types.js';

/** What the handlers need of a request, the same for HTTP/1.1 and HTTP/2 (compat API). */
export interface Req extends AsyncIterable<Buffer | string> {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  socket: unknown;
  httpVersion: string;
}

/** What the handlers need of a response, the same for HTTP/1.1 and HTTP/2 (compat API). */
export interface Res {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string): boolean;
  end(chunk?: string): unknown;
  on(event: 'close', listener: () => void): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  readonly writableEnded: boolean;
  readonly headersSent: boolean;
  destroy?(): void;
  stream?: { destroy(): void };
}

export function tlsSocketOf(req: Req): TLSSocket | undefined {
  return req.socket as TLSSocket | undefined;
}

export async function readBody(req: Req): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks);
}

export function sendJson(
  res: Res,
  status: number,
  body: Json,
  headers: Record<string, string> = {},
  contentType = 'application/json',
): void {
  if (res.writableEnded || res.headersSent) return;
  const text = JSON.stringify(body) + '\n';
  res.writeHead(status, {
    'Content-Type': contentType,
    'Cache-Control': 'no-cache, private',
    'Content-Length': String(Buffer.byteLength(text)),
    'X-Kubernetes-Pf-Flowschema-Uid': 'fake',
    ...headers,
  });
  res.end(text);
}

export function header(req: Req, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(',') : v;
}
