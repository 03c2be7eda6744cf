// A typed client for the few systemd Manager calls the systemd cgroup driver needs: make a
// transient slice, change its properties, stop it. Spoken over systemd's private socket (what
// runc and the kubelet use as root; it needs no dbus-daemon) or the system bus, through the one
// D-Bus connection of src/dbus.
import { DbusCallError, DbusConnection } from '../dbus/dbus-connection.js';
import { SYSTEM_BUS_SOCKET, SYSTEMD_PRIVATE_SOCKET } from '../dbus/system-bus-address.js';
import { errorMessage } from '../util/error-message.js';

const SYSTEMD = 'org.freedesktop.systemd1';
const MANAGER_PATH = '/org/freedesktop/systemd1';
const MANAGER = 'org.freedesktop.systemd1.Manager';
/** runc waits as long for its own StartTransientUnit jobs. */
const JOB_TIMEOUT_MS = 30_000;

/** A unit property as D-Bus takes it: a signature and a value of that type. */
export type UnitProperty =
  | readonly [name: string, type: 'b', value: boolean]
  | readonly [name: string, type: 't', value: bigint]
  | readonly [name: string, type: 's', value: string]
  | readonly [name: string, type: 'as', value: readonly string[]];

export class SystemdDbus {
  private readonly jobWaiters = new Map<string, (result: string) => void>();
  private readonly finishedJobs = new Map<string, string>();

  private constructor(private readonly conn: DbusConnection) {
    conn.onSignal((s) => {
      if (s.member !== 'JobRemoved') return;
      const [, job, , result] = s.body as [number, string, string, string];
      const waiter = this.jobWaiters.get(job);
      if (waiter) return waiter(result);
      // The job may end before the reply that names it is read; keep the last few results.
      this.finishedJobs.set(job, result);
      if (this.finishedJobs.size > 64) this.finishedJobs.delete(this.finishedJobs.keys().next().value!);
    });
    conn.onClose(() => {
      for (const w of this.jobWaiters.values()) w('connection closed');
    });
  }

  /** Connects; on the system bus the daemon first wants a Hello. Subscribe makes systemd send JobRemoved here, and proves the link works. */
  static async connect(socket: string = SYSTEMD_PRIVATE_SOCKET, timeoutMs?: number): Promise<SystemdDbus> {
    const conn = await DbusConnection.connect(socket, {
      peer: 'systemd',
      hello: socket !== SYSTEMD_PRIVATE_SOCKET,
      timeoutMs,
    });
    const client = new SystemdDbus(conn);
    try {
      await client.call('Subscribe', '', []);
    } catch (err) {
      conn.close();
      throw err;
    }
    return client;
  }

  /** As runc as root: systemd's own socket, else the system bus. */
  static async connectAny(): Promise<SystemdDbus> {
    try {
      return await SystemdDbus.connect(SYSTEMD_PRIVATE_SOCKET);
    } catch (first) {
      try {
        return await SystemdDbus.connect(SYSTEM_BUS_SOCKET);
      } catch {
        throw new Error(
          `cannot reach systemd over D-Bus at ${SYSTEMD_PRIVATE_SOCKET} or ${SYSTEM_BUS_SOCKET}: ${errorMessage(first)}`,
        );
      }
    }
  }

  get closed(): boolean {
    return this.conn.closed;
  }

  /** The reply's first value. */
  private async call(member: string, signature: string, body: unknown[]): Promise<unknown> {
    const reply = await this.conn.call({
      destination: SYSTEMD,
      path: MANAGER_PATH,
      interface: MANAGER,
      member,
      ...(signature ? { signature, body } : {}),
    });
    return reply[0];
  }

  private waitJob(job: string): Promise<void> {
    const finished = this.finishedJobs.get(job);
    if (finished !== undefined) {
      this.finishedJobs.delete(job);
      return finished === 'done'
        ? Promise.resolve()
        : Promise.reject(new DbusCallError('JobFailed', `systemd job ${job} ended with "${finished}"`));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish('timeout'), JOB_TIMEOUT_MS);
      const finish = (result: string) => {
        clearTimeout(timer);
        this.jobWaiters.delete(job);
        if (result === 'done') resolve();
        else reject(new DbusCallError('JobFailed', `systemd job ${job} ended with "${result}"`));
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
    const job = String(
      await this.call('StartTransientUnit', 'ssa(sv)a(sa(sv))', [unit, 'replace', SystemdDbus.wire(props), []]),
    );
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
      if (err instanceof DbusCallError && err.dbusName === 'org.freedesktop.systemd1.NoSuchUnit') return;
      throw err;
    }
    await this.waitJob(job);
  }

  close(): void {
    this.conn.close();
  }
}
