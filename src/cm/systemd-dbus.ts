// A typed client for the few systemd Manager calls the systemd cgroup driver needs: make a
// transient slice, change its properties, stop it. Spoken over systemd's private socket (what
// runc and the kubelet use as root; it needs no dbus-daemon) or the system bus.
import handshake from '@homebridge/dbus-native/lib/handshake.js';
import * as codec from '@homebridge/dbus-native/lib/message.js';
import type { DbusMessage } from '@homebridge/dbus-native/lib/message.js';
import { createConnection, type Socket } from 'node:net';
import { errorMessage } from '../util/error-message.js';

const SYSTEMD = 'org.freedesktop.systemd1';
const MANAGER_PATH = '/org/freedesktop/systemd1';
const MANAGER = 'org.freedesktop.systemd1.Manager';
/** runc waits as long for its own StartTransientUnit jobs. */
const JOB_TIMEOUT_MS = 30_000;
/**
 * A systemd that does not answer a call (or the handshake) in this long is treated as gone: the
 * connection is dropped and made again at the next call, so nothing waits on it forever.
 */
const CALL_TIMEOUT_MS = 15_000;
const MESSAGE_TYPE_SIGNAL = 4;

export const PRIVATE_SOCKET = '/run/systemd/private';
export const SYSTEM_BUS_SOCKET = '/run/dbus/system_bus_socket';

/** A unit property as D-Bus takes it: a signature and a value of that type. */
export type UnitProperty =
  | readonly [name: string, type: 'b', value: boolean]
  | readonly [name: string, type: 't', value: bigint]
  | readonly [name: string, type: 's', value: string]
  | readonly [name: string, type: 'as', value: readonly string[]];

export class SystemdDbusError extends Error {
  constructor(
    readonly dbusName: string,
    message: string,
  ) {
    super(message);
    this.name = 'SystemdDbusError';
  }
}

// The wire pieces of @homebridge/dbus-native (authentication and the message codec) are used
// directly: its bus object pulls in an XML introspection stack (140 KiB) that is never needed here.
const TYPE_CALL = 1;
const TYPE_RETURN = 2;
const TYPE_ERROR = 3;

function toError(m: DbusMessage): SystemdDbusError {
  const text = typeof m.body?.[0] === 'string' ? m.body[0] : (m.errorName ?? 'error');
  return new SystemdDbusError(m.errorName ?? 'Error', text);
}

export class SystemdDbus {
  private readonly jobWaiters = new Map<string, (result: string) => void>();
  private readonly finishedJobs = new Map<string, string>();
  private closedWith: Error | undefined;

  private readonly calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private serial = 1;

  private constructor(private readonly stream: Socket) {
    const fail = (err?: Error) => {
      this.closedWith ??= err ?? new Error('connection to systemd closed');
      for (const c of this.calls.values()) c.reject(this.closedWith);
      this.calls.clear();
      for (const w of this.jobWaiters.values()) w('connection closed');
    };
    stream.on('error', fail);
    stream.on('close', () => fail());
  }

  private onMessage(m: DbusMessage): void {
    if (m.type === TYPE_RETURN || m.type === TYPE_ERROR) {
      const call = m.replySerial === undefined ? undefined : this.calls.get(m.replySerial);
      if (!call) return;
      this.calls.delete(m.replySerial!);
      if (m.type === TYPE_RETURN) call.resolve(m.body?.[0]);
      else call.reject(toError(m));
      return;
    }
    if (m.type !== MESSAGE_TYPE_SIGNAL || m.member !== 'JobRemoved') return;
    const [, job, , result] = (m.body ?? []) as [number, string, string, string];
    const waiter = this.jobWaiters.get(job);
    if (waiter) return waiter(result);
    // The job may end before the reply that names it is read; keep the last few results.
    this.finishedJobs.set(job, result);
    if (this.finishedJobs.size > 64) this.finishedJobs.delete(this.finishedJobs.keys().next().value!);
  }

  /**
   * Connects and authenticates (EXTERNAL: the kernel vouches for our uid). systemd's private
   * socket is peer-to-peer; on the system bus the daemon first wants a Hello.
   */
  static connect(socket: string = PRIVATE_SOCKET, timeoutMs = CALL_TIMEOUT_MS): Promise<SystemdDbus> {
    return new Promise((resolve, reject) => {
      const stream = createConnection(socket);
      const client = new SystemdDbus(stream);
      // How far it got, for the error: a hang says which side stopped answering.
      let stage = 'connecting';
      stream.once('connect', () => (stage = 'authenticating (no OK to AUTH EXTERNAL)'));
      const early = (err: Error) => reject(err);
      stream.once('error', early);
      const timer = setTimeout(() => {
        stream.destroy();
        reject(new Error(`systemd did not complete the D-Bus handshake on ${socket} within ${timeoutMs / 1000} s: ${stage}`));
      }, timeoutMs);
      timer.unref();
      stream.once('close', () => clearTimeout(timer));
      handshake(stream, { authMethods: ['EXTERNAL'] }, (err) => {
        if (err) {
          stream.destroy();
          return reject(err);
        }
        stage = socket === PRIVATE_SOCKET ? 'authenticated, no reply to Subscribe' : 'authenticated, no reply to Hello or Subscribe';
        codec.unmarshalMessages(stream, (m) => client.onMessage(m), {});
        const ready = socket === PRIVATE_SOCKET ? Promise.resolve() : client.invoke({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'Hello' });
        // Subscribe makes systemd send JobRemoved to this connection; it also proves the link works.
        ready
          .then(() => client.call('Subscribe', '', []))
          .then(() => {
            clearTimeout(timer);
            stream.removeListener('error', early);
            resolve(client);
          })
          .catch((e: unknown) => {
            stream.destroy();
            reject(e instanceof Error ? e : new Error(String(e)));
          });
      });
    });
  }

  /** As runc as root: systemd's own socket, else the system bus. */
  static async connectAny(): Promise<SystemdDbus> {
    try {
      return await SystemdDbus.connect(PRIVATE_SOCKET);
    } catch (first) {
      try {
        return await SystemdDbus.connect(SYSTEM_BUS_SOCKET);
      } catch {
        throw new Error(`cannot reach systemd over D-Bus at ${PRIVATE_SOCKET} or ${SYSTEM_BUS_SOCKET}: ${errorMessage(first)}`);
      }
    }
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  private invoke(msg: Record<string, unknown>): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const serial = this.serial++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(serial);
        const err = new Error(`systemd did not answer ${String(msg.member)} within ${CALL_TIMEOUT_MS / 1000} s`);
        reject(err);
        // Whatever it was doing, this connection is not to be trusted any more.
        this.closedWith ??= err;
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
      this.stream.write(codec.marshall({ ...msg, type: TYPE_CALL, serial }));
    });
  }

  private call(member: string, signature: string, body: unknown[]): Promise<unknown> {
    return this.invoke({ destination: SYSTEMD, path: MANAGER_PATH, interface: MANAGER, member, ...(signature ? { signature, body } : {}) });
  }

  private waitJob(job: string): Promise<void> {
    const finished = this.finishedJobs.get(job);
    if (finished !== undefined) {
      this.finishedJobs.delete(job);
      return finished === 'done' ? Promise.resolve() : Promise.reject(new SystemdDbusError('JobFailed', `systemd job ${job} ended with "${finished}"`));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish('timeout'), JOB_TIMEOUT_MS);
      const finish = (result: string) => {
        clearTimeout(timer);
        this.jobWaiters.delete(job);
        if (result === 'done') resolve();
        else reject(new SystemdDbusError('JobFailed', `systemd job ${job} ended with "${result}"`));
      };
      this.jobWaiters.set(job, finish);
    });
  }

  private static wire(props: readonly UnitProperty[]): unknown[] {
    // dbus-native takes a variant as [signature, value] and a uint64 as a decimal string.
    return props.map(([name, type, value]) => [name, [type, typeof value === 'bigint' ? value.toString() : value]]);
  }

  /** Starts a transient unit and waits for its start job; UnitExists when it is already there. */
  async startTransientUnit(unit: string, props: readonly UnitProperty[]): Promise<void> {
    const job = String(await this.call('StartTransientUnit', 'ssa(sv)a(sa(sv))', [unit, 'replace', SystemdDbus.wire(props), []]));
    await this.waitJob(job);
  }

  setUnitProperties(unit: string, props: readonly UnitProperty[]): Promise<void> {
    return this.call('SetUnitProperties', 'sba(sv)', [unit, true, SystemdDbus.wire(props)]).then(() => undefined);
  }

  /** Stops the unit and waits; a unit systemd does not know is already stopped. */
  async stopUnit(unit: string): Promise<void> {
    let job: string;
    try {
      job = String(await this.call('StopUnit', 'ss', [unit, 'replace']));
    } catch (err) {
      if (err instanceof SystemdDbusError && err.dbusName === 'org.freedesktop.systemd1.NoSuchUnit') return;
      throw err;
    }
    await this.waitJob(job);
  }

  close(): void {
    this.closedWith ??= new Error('closed');
    this.stream.end();
  }
}
