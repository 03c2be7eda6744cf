// Just enough of a WebSocket client (RFC 6455) to run one exec over the kubelet API's channel
// protocols: the handshake with a subprotocol, then server frames read until the connection closes;
// each binary frame's first byte is its channel (1 stdout, 2 stderr, 3 status).
import { randomBytes } from 'node:crypto';
import { connect } from 'node:tls';

export interface WebSocketExec {
  status: number;
  protocol: string;
  /** Everything received per channel, as text. */
  channels: Record<number, string>;
}

export function webSocketExec(
  host: string,
  port: number,
  path: string,
  tls: { cert: string; key: string },
  protocol: string,
): Promise<WebSocketExec> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host, port, cert: tls.cert, key: tls.key, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] },
      () => {
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n` +
            `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
        );
      },
    );
    let buf = Buffer.alloc(0);
    let head: { status: number; protocol: string } | undefined;
    const channels: Record<number, string> = {};
    const timer = setTimeout(() => socket.destroy(new Error('websocket exec timed out')), 30_000);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!head) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const text = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + 4);
        head = {
          status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0),
          protocol: /^sec-websocket-protocol:\s*(.+)$/im.exec(text)?.[1]?.trim() ?? '',
        };
        if (head.status !== 101) {
          socket.destroy();
          return;
        }
      }
      // Server frames are not masked.
      for (;;) {
        if (buf.length < 2) return;
        const opcode = buf[0]! & 0x0f;
        let len = buf[1]! & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        const payload = buf.subarray(off, off + len);
        buf = buf.subarray(off + len);
        if (opcode === 0x8) return socket.end();
        if ((opcode === 0x2 || opcode === 0x1) && payload.length > 0)
          channels[payload[0]!] = (channels[payload[0]!] ?? '') + payload.subarray(1).toString('utf8');
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ status: head?.status ?? 0, protocol: head?.protocol ?? '', channels });
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      // A reset after the exchange is a close like any other; before it, a failure.
      if (head?.status === 101) resolve({ status: head.status, protocol: head.protocol, channels });
      else reject(e);
    });
  });
}
