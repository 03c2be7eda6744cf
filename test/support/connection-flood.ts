// A client that tries to hold `size` connections to a TLS server without ever completing a request,
// as a hostile one does: each connection the server closes is opened again after `reopenMs`.
// - 'tls-trickle': TCP, then a TLS handshake record announcing 16 KiB, sent a byte every `trickleMs`;
// - 'body-never-sent': a TLS handshake without a client certificate, then a request head announcing a
//   1 MiB body that never comes.
import { spawn } from 'node:child_process';
import { connect as tcpConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connect as tlsConnect } from 'node:tls';

export type FloodKind = 'tls-trickle' | 'body-never-sent';

export interface FloodOptions {
  readonly host: string;
  readonly port: number;
  readonly kind: FloodKind;
  readonly size: number;
  /** The source address (a second loopback address stands for another host). */
  readonly localAddress?: string;
  readonly reopenMs?: number;
  readonly trickleMs?: number;
}

const HANDSHAKE_RECORD_HEAD = Buffer.from([0x16, 0x03, 0x01, 0x40, 0x00]);

export class ConnectionFlood {
  /** Connections made so far, and closed by the server (or reset). */
  opened = 0;
  closed = 0;
  /** Most connections open at one moment (from the client's side). */
  mostOpen = 0;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly o: FloodOptions) {}

  get open(): number {
    return this.sockets.size;
  }

  start(): void {
    for (let i = 0; i < this.o.size; i++) this.connect();
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private connect(): void {
    if (this.stopped) return;
    const { host, port, localAddress } = this.o;
    const s =
      this.o.kind === 'tls-trickle'
        ? tcpConnect({ host, port, localAddress }, () => this.trickle(s, 0))
        : tlsConnect(
            // The TCP socket is made here so that it leaves from localAddress.
            {
              socket: tcpConnect({ host, port, localAddress }),
              rejectUnauthorized: false,
              ALPNProtocols: ['http/1.1'],
            },
            () => s.write(`POST /pods HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Length: 1048576\r\n\r\n`),
          );
    this.opened++;
    this.sockets.add(s);
    this.mostOpen = Math.max(this.mostOpen, this.sockets.size);
    s.on('data', () => {});
    s.on('error', () => {});
    s.once('close', () => {
      this.sockets.delete(s);
      if (this.stopped) return;
      this.closed++;
      this.later(this.o.reopenMs ?? 1_000, () => this.connect());
    });
  }

  private trickle(s: Socket, sent: number): void {
    if (this.stopped || s.destroyed) return;
    s.write(sent < HANDSHAKE_RECORD_HEAD.length ? HANDSHAKE_RECORD_HEAD.subarray(sent, sent + 1) : Buffer.alloc(1));
    this.later(this.o.trickleMs ?? 1_000, () => this.trickle(s, sent + 1));
  }
}

export interface FloodCounts {
  readonly opened: number;
  readonly closed: number;
  readonly mostOpen: number;
  readonly open: number;
}

export interface FloodProcess {
  /** The latest counts the flood reported. */
  counts(): FloodCounts;
  /** Stops it; resolves with its last counts. */
  stop(): Promise<FloodCounts>;
}

/** Runs a flood in a child process, so that its sockets and handshakes do not slow the test's own event loop. */
export function startFloodProcess(o: FloodOptions): FloodProcess {
  let last: FloodCounts = { opened: 0, closed: 0, mostOpen: 0, open: 0 };
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'connection-flood-child.ts'), JSON.stringify(o)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      last = JSON.parse(line) as FloodCounts;
    } catch {
      // not a counts line
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    counts: () => last,
    stop: async () => {
      child.stdin!.end();
      await exited;
      return last;
    },
  };
}
