// tcpSocket probe: success when a TCP connection to host:port is established within the timeout.
import * as net from 'node:net';
import { joinHostPort } from './port.js';
import type { ProbeOutcome } from './types.js';

export function runTcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  return new Promise((resolve) => {
    let settled = false;
    const socket = net.connect({ host, port });
    const finish = (o: ProbeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(o);
    };
    const timer = setTimeout(() => finish({ result: 'failure', output: `dial tcp ${addr}: i/o timeout` }), timeoutMs);
    socket.once('connect', () => finish({ result: 'success', output: '' }));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      finish({ result: 'failure', output: `dial tcp ${addr}: connect: ${describeSocketError(err)}` }),
    );
  });
}

/** Go's wording for the usual dial errors, so messages read as the kubelet's do. */
export function describeSocketError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'EHOSTUNREACH':
      return 'no route to host';
    case 'ENETUNREACH':
      return 'network is unreachable';
    case 'ECONNRESET':
      return 'connection reset by peer';
    default:
      return err.message;
  }
}
