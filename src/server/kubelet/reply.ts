// Answers in the shapes the kubelet writes them: errors as plain text (go-restful's WriteError),
// JSON documents with application/json.
import type { ServerResponse } from 'node:http';

export function replyText(
  res: ServerResponse,
  statusCode: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(statusCode, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': 'nosniff',
    // A client that could not authenticate does not keep a connection (nor its slot) for another try.
    ...(statusCode === 401 ? { Connection: 'close' } : {}),
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

export function replyJson(res: ServerResponse, statusCode: number, doc: unknown): void {
  replyText(res, statusCode, JSON.stringify(doc), 'application/json');
}

/** An error that becomes an HTTP answer, its message the body. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}
