// A small client of the system D-Bus for logind: method calls with deadlines, and the signals a
// match rule asks for. Same wire pieces as src/cm/systemd-dbus.ts (dbus-native's handshake and
// codec, not its bus object). Unix fds cannot be received by Node, so the inhibitor lock itself is
// taken by systemd-inhibit (inhibit-lock.ts); nothing here needs one.
import handshake from '@homebridge/dbus-native/lib/handshake.js';
import * as codec from '@homebridge/dbus-native/lib/message.js';
import type { DbusMessage } from '@homebridge/dbus-native/lib/message.js';
import { createConnection, type Socket } from 'node:net';

export const DEFAULT_SYSTEM_BUS = '/run/dbus/system_bus_socket';
const CALL_TIMEOUT_MS = 15_000;
const TYPE_CALL = 1;
const TYPE_RETURN = 2;
const TYPE_ERROR = 3;
const TYPE_SIGNAL = 4;

export class DbusCallError extends Error {
  constructor(
    readonly dbusName: string,
    message: string,
  ) {
    super(message);
    this.name = 'DbusCallError';
  }
}

/** The socket path of the system bus: DBUS_SYSTEM_BUS_ADDRESS's unix:path=, as libdbus and sd-bus read it. */
export function systemBusSocket(env: NodeJS.ProcessEnv = process.env): string {
  const address = env.DBUS_SYSTEM_BUS_ADDRESS;
  if (!address) return DEFAULT_SYSTEM_BUS;
  for (const entry of address.split(';')) {
    const m = /^unix:(.*)$/.exec(entry);
    const path = m?.[1].split(',').find((kv) => kv.startsWith('path='));
    if (path) return decodeURIComponent(path.slice('path='.length));
  }
  throw new Error(`DBUS_SYSTEM_BUS_ADDRESS ${JSON.stringify(address)} names no unix:path= socket`);
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
  readonly path?: string;
  readonly interface?: string;
  readonly member?: string;
  readonly body: readonly unknown[];
}

export class SystemBus {
  private readonly calls = new Map<number, { resolve: (v: unknown[]) => void; reject: (e: Error) => void }>();
  private readonly signalListeners = new Set<(s: SignalMessage) => void>();
  private readonly closeListeners = new Set<(err: Error) => void>();
  private serial = 1;
  private closedWith: Error | undefined;

  private constructor(private readonly stream: Socket) {
    const fail = (err?: Error): void => {
      if (this.closedWith && this.calls.size === 0) return;
      const first = !this.closedWith;
      this.closedWith ??= err ?? new Error('connection to the system bus closed');
      for (const c of this.calls.values()) c.reject(this.closedWith);
      this.calls.clear();
      if (first) for (const l of this.closeListeners) l(this.closedWith);
    };
    stream.on('error', fail);
    stream.on('close', () => fail());
  }

  /** Connects, authenticates (EXTERNAL) and says Hello. */
  static connect(socket: string, timeoutMs = CALL_TIMEOUT_MS): Promise<SystemBus> {
    return new Promise((resolve, reject) => {
      const stream = createConnection(socket);
      const bus = new SystemBus(stream);
      const timer = setTimeout(() => {
        stream.destroy();
        reject(new Error(`the system bus at ${socket} did not complete the D-Bus handshake within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      timer.unref();
      const early = (err: Error): void => {
        clearTimeout(timer);
        reject(new Error(`cannot connect to the system bus at ${socket}: ${err.message}`));
      };
      stream.once('error', early);
      handshake(stream, { authMethods: ['EXTERNAL'] }, (err) => {
        if (err) {
          clearTimeout(timer);
          stream.destroy();
          return reject(err);
        }
        codec.unmarshalMessages(stream, (m) => bus.onMessage(m), {});
        bus
          .call({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'Hello' })
          .then(() => {
            clearTimeout(timer);
            stream.removeListener('error', early);
            resolve(bus);
          })
          .catch((e: unknown) => {
            clearTimeout(timer);
            stream.destroy();
            reject(e instanceof Error ? e : new Error(String(e)));
          });
      });
    });
  }

  private onMessage(m: DbusMessage): void {
    if (m.type === TYPE_RETURN || m.type === TYPE_ERROR) {
      const call = m.replySerial === undefined ? undefined : this.calls.get(m.replySerial);
      if (!call) return;
      this.calls.delete(m.replySerial!);
      if (m.type === TYPE_RETURN) call.resolve(m.body ?? []);
      else call.reject(new DbusCallError(m.errorName ?? 'Error', typeof m.body?.[0] === 'string' ? m.body[0] : (m.errorName ?? 'error')));
      return;
    }
    if (m.type !== TYPE_SIGNAL) return;
    const s: SignalMessage = { path: m.path as string | undefined, interface: m.interface as string | undefined, member: m.member, body: m.body ?? [] };
    for (const l of this.signalListeners) l(s);
  }

  /** The reply's body; rejects with the D-Bus error, a closed connection, or after the deadline. */
  call(spec: CallSpec): Promise<unknown[]> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const serial = this.serial++;
    const { signature, body, ...header } = spec;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(serial);
        reject(new Error(`no answer to ${spec.interface}.${spec.member} within ${CALL_TIMEOUT_MS / 1000} s`));
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
      this.stream.write(codec.marshall({ ...header, type: TYPE_CALL, serial, ...(signature ? { signature, body } : {}) }));
    });
  }

  /** Asks the bus to send this connection the signals matching `rule`. */
  async addMatch(rule: string): Promise<void> {
    await this.call({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'AddMatch', signature: 's', body: [rule] });
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
    this.closedWith = new Error('closed');
    for (const l of this.closeListeners) l(this.closedWith);
    this.stream.end();
    this.stream.destroy();
  }
}
