// The one D-Bus client of bootlet: a connection to systemd's private socket or to the system bus,
// method calls with deadlines, and the signals a match rule asks for. The systemd cgroup driver
// (src/cm) and the node shutdown manager (src/nodeshutdown, logind) speak through it.
// The wire pieces of @homebridge/dbus-native (authentication and the message codec) are used
// directly: its bus object pulls in an XML introspection stack (140 KiB) that is never needed here.
// Unix fds cannot be received by Node, so nothing here takes one.
import handshake from '@homebridge/dbus-native/lib/handshake.js';
import * as codec from '@homebridge/dbus-native/lib/message.js';
import type { DbusMessage } from '@homebridge/dbus-native/lib/message.js';
import { createConnection, type Socket } from 'node:net';

/**
 * A peer that does not answer a call (or the handshake) in this long is treated as gone: the
 * connection is dropped, so nothing waits on it forever and its owner connects again.
 */
const CALL_TIMEOUT_MS = 15_000;
const TYPE_CALL = 1;
const TYPE_RETURN = 2;
const TYPE_ERROR = 3;
const TYPE_SIGNAL = 4;
const FLAG_NO_REPLY_EXPECTED = 1;
/**
 * systemd's sd-bus (seen with 252) leaves a message that reaches it in the same read as the
 * client's BEGIN unparsed until the socket next has data, so the first call of a peer-to-peer
 * connection can hang for as long as the client says nothing more. Until the peer has said
 * anything, a Peer.Ping (no reply wanted) wakes it, first soon, then less often.
 */
const FIRST_NUDGE_MS = 50;
const MAX_NUDGE_MS = 1_000;

/** An error reply, by its D-Bus name (`org.freedesktop.systemd1.NoSuchUnit`). */
export class DbusCallError extends Error {
  constructor(
    readonly dbusName: string,
    message: string,
  ) {
    super(message);
    this.name = 'DbusCallError';
  }
}

export interface CallSpec {
  destination: string;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: unknown[];
}

export interface SignalMessage {
  /** The unique name of the connection that sent it, as the bus daemon stamps it (`:1.42`). */
  readonly sender?: string;
  readonly path?: string;
  readonly interface?: string;
  readonly member?: string;
  readonly body: readonly unknown[];
}

export interface ConnectOptions {
  /** Who answers, for errors: "systemd", "the system bus". */
  readonly peer: string;
  /** A bus daemon wants Hello first; systemd's private socket is peer-to-peer and has none. */
  readonly hello: boolean;
  readonly timeoutMs?: number;
}

export class DbusConnection {
  private readonly calls = new Map<number, { resolve: (v: unknown[]) => void; reject: (e: Error) => void }>();
  private readonly signalListeners = new Set<(s: SignalMessage) => void>();
  private readonly closeListeners = new Set<(err: Error) => void>();
  private serial = 1;
  private closedWith: Error | undefined;
  /** Set on a peer-to-peer connection until the peer's first message (see FIRST_NUDGE_MS). */
  private nudgeUntilHeard = false;
  private nudgeTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly stream: Socket,
    private readonly peer: string,
  ) {
    stream.on('error', (err) => this.fail(err));
    stream.on('close', () => this.fail(new Error(`connection to ${peer} closed`)));
  }

  /** Connects and authenticates (EXTERNAL: the kernel vouches for our uid), then says Hello when asked. */
  static connect(socket: string, o: ConnectOptions): Promise<DbusConnection> {
    const timeoutMs = o.timeoutMs ?? CALL_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const stream = createConnection(socket);
      const conn = new DbusConnection(stream, o.peer);
      // How far it got, for the error: a hang says which side stopped answering.
      let stage = 'connecting';
      stream.once('connect', () => (stage = 'authenticating (no OK to AUTH EXTERNAL)'));
      const settle = (err: Error | undefined): void => {
        clearTimeout(timer);
        stream.removeListener('error', early);
        if (!err) return resolve(conn);
        stream.destroy();
        reject(err);
      };
      const early = (err: Error): void => settle(new Error(`cannot connect to ${o.peer} at ${socket}: ${err.message}`));
      stream.once('error', early);
      const timer = setTimeout(
        () =>
          settle(
            new Error(
              `${o.peer} did not complete the D-Bus handshake on ${socket} within ${timeoutMs / 1000} s: ${stage}`,
            ),
          ),
        timeoutMs,
      );
      timer.unref();
      handshake(stream, { authMethods: ['EXTERNAL'] }, (err) => {
        if (err) return settle(err);
        codec.unmarshalMessages(stream, (m) => conn.onMessage(m), {});
        if (!o.hello) {
          conn.nudgeUntilHeard = true;
          return settle(undefined);
        }
        stage = 'authenticated, no reply to Hello';
        conn
          .call({
            destination: 'org.freedesktop.DBus',
            path: '/org/freedesktop/DBus',
            interface: 'org.freedesktop.DBus',
            member: 'Hello',
          })
          .then(
            () => settle(undefined),
            (e: unknown) => settle(e instanceof Error ? e : new Error(String(e))),
          );
      });
    });
  }

  private fail(err: Error): void {
    this.stopNudging();
    const first = !this.closedWith;
    this.closedWith ??= err;
    for (const c of this.calls.values()) c.reject(this.closedWith);
    this.calls.clear();
    if (first) for (const l of this.closeListeners) l(this.closedWith);
  }

  private onMessage(m: DbusMessage): void {
    this.stopNudging();
    if (m.type === TYPE_RETURN || m.type === TYPE_ERROR) {
      const call = m.replySerial === undefined ? undefined : this.calls.get(m.replySerial);
      if (!call) return;
      this.calls.delete(m.replySerial!);
      if (m.type === TYPE_RETURN) call.resolve(m.body ?? []);
      else
        call.reject(
          new DbusCallError(
            m.errorName ?? 'Error',
            typeof m.body?.[0] === 'string' ? m.body[0] : (m.errorName ?? 'error'),
          ),
        );
      return;
    }
    if (m.type !== TYPE_SIGNAL) return;
    const s: SignalMessage = {
      sender: m.sender as string | undefined,
      path: m.path as string | undefined,
      interface: m.interface as string | undefined,
      member: m.member,
      body: m.body ?? [],
    };
    for (const l of this.signalListeners) l(s);
  }

  /** The reply's body; rejects with the D-Bus error, a closed connection, or after the deadline (which drops the connection). */
  call(spec: CallSpec): Promise<unknown[]> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const serial = this.serial++;
    const { signature, body, ...header } = spec;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(serial);
        const err = new Error(
          `${this.peer} did not answer ${spec.interface}.${spec.member} within ${CALL_TIMEOUT_MS / 1000} s`,
        );
        reject(err);
        // Whatever it was doing, this connection is not to be trusted any more.
        this.fail(err);
        this.stream.destroy();
      }, CALL_TIMEOUT_MS);
      timer.unref();
      this.calls.set(serial, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.stream.write(
        codec.marshall({ ...header, type: TYPE_CALL, serial, ...(signature ? { signature, body } : {}) }),
      );
      if (this.nudgeUntilHeard && !this.nudgeTimer) this.nudge(FIRST_NUDGE_MS);
    });
  }

  private nudge(afterMs: number): void {
    this.nudgeTimer = setTimeout(() => {
      if (!this.nudgeUntilHeard || this.closedWith) return;
      const ping = {
        type: TYPE_CALL,
        flags: FLAG_NO_REPLY_EXPECTED,
        serial: this.serial++,
        path: '/',
        interface: 'org.freedesktop.DBus.Peer',
        member: 'Ping',
      };
      this.stream.write(codec.marshall(ping));
      this.nudge(Math.min(afterMs * 2, MAX_NUDGE_MS));
    }, afterMs);
    this.nudgeTimer.unref();
  }

  private stopNudging(): void {
    this.nudgeUntilHeard = false;
    clearTimeout(this.nudgeTimer);
    this.nudgeTimer = undefined;
  }

  /** Asks the bus to send this connection the signals matching `rule`. */
  async addMatch(rule: string): Promise<void> {
    await this.call({
      destination: 'org.freedesktop.DBus',
      path: '/org/freedesktop/DBus',
      interface: 'org.freedesktop.DBus',
      member: 'AddMatch',
      signature: 's',
      body: [rule],
    });
  }

  onSignal(listener: (s: SignalMessage) => void): void {
    this.signalListeners.add(listener);
  }

  /** Called once, when the connection is lost or closed. */
  onClose(listener: (err: Error) => void): void {
    this.closeListeners.add(listener);
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  close(): void {
    if (this.closedWith) return;
    this.fail(new Error('closed'));
    this.stream.end();
    this.stream.destroy();
  }
}
