// An HTTP answer written straight on a socket: an upgrade request that is refused never gets a
// ServerResponse, only its socket.
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';

export function rawReply(
  socket: Duplex,
  statusCode: number,
  body: string,
  extraHeaders: Record<string, string> = {},
): void {
  if (socket.destroyed) return;
  const payload = Buffer.from(body);
  const headers = {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(payload.length),
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
    ...extraHeaders,
  };
  const head = `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? 'Error'}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;
  socket.end(Buffer.concat([Buffer.from(head, 'latin1'), payload]));
}
