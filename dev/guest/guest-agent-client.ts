// The host's side of the guest agent (agent.py): JSON lines over the virtio-serial port that qemu
// exposes as a unix socket. One connection per boot; answers are matched to requests by id, so
// commands may run at once.
import { connect, type Socket } from 'node:net';

export interface GuestResult {
  code: number | null;
  signal: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

interface Pending {
  resolve(r: GuestResult): void;
  reject(err: Error): void;
}

export class GuestCommandError extends Error {
  override name = 'GuestCommandError';
  constructor(
    readonly command: string,
    readonly result: GuestResult,
  ) {
    const why = result.timedOut ? 'timed out' : result.signal ? `signal ${result.signal}` : `exit ${result.code}`;
    super(`guest: ${command} failed (${why}): ${(result.stderr || result.stdout).trim().slice(-3000)}`);
  }
}

export class GuestAgentClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buf = '';
  private closedWith: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('the guest agent connection closed (guest down?)')));
  }

  /** Connects to qemu's end of the port (the socket exists once qemu has started). */
  static connect(path: string): Promise<GuestAgentClient> {
    return new Promise((resolve, reject) => {
      const s = connect(path);
      s.once('connect', () => {
        s.removeListener('error', reject);
        resolve(new GuestAgentClient(s));
      });
      s.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  private onData(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      let msg: { id?: number } & GuestResult;
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        continue;
      }
      const p = msg.id === undefined ? undefined : this.pending.get(msg.id);
      if (!p) continue;
      this.pending.delete(msg.id!);
      p.resolve({
        code: msg.code,
        signal: msg.signal,
        stdout: msg.stdout,
        stderr: msg.stderr,
        timedOut: msg.timedOut,
      });
    }
  }

  private fail(err: Error): void {
    this.closedWith ??= err;
    for (const p of this.pending.values()) p.reject(this.closedWith);
    this.pending.clear();
  }

  /** Runs argv in the guest; resolves with how it ended (never rejects for a non-zero exit). */
  exec(argv: string[], o: { input?: string; timeoutMs?: number } = {}): Promise<GuestResult> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.write(JSON.stringify({ id, argv, input: o.input, timeoutMs: o.timeoutMs ?? 120_000 }) + '\n');
    });
  }

  close(): void {
    this.socket.destroy();
  }
}
