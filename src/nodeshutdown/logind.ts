// What the node shutdown manager asks of logind (and of systemd, to make logind reload): its
// InhibitDelayMaxUSec, the inhibitors it holds, and the PrepareForShutdown signal.
import { DbusCallError, type DbusConnection } from '../dbus/dbus-connection.js';
import { errorMessage } from '../util/error-message.js';

const LOGIND = 'org.freedesktop.login1';
const LOGIND_PATH = '/org/freedesktop/login1';
const MANAGER = 'org.freedesktop.login1.Manager';

export interface Inhibitor {
  readonly what: string;
  readonly who: string;
  readonly why: string;
  readonly mode: string;
  readonly uid: number;
  readonly pid: number;
}

export class Logind {
  constructor(private readonly bus: DbusConnection) {}

  /** logind.conf's InhibitDelayMaxSec, in milliseconds. */
  async inhibitDelayMaxMs(): Promise<number> {
    let body: unknown[];
    try {
      body = await this.bus.call({
        destination: LOGIND,
        path: LOGIND_PATH,
        interface: 'org.freedesktop.DBus.Properties',
        member: 'Get',
        signature: 'ss',
        body: [MANAGER, 'InhibitDelayMaxUSec'],
      });
    } catch (err) {
      throw new Error(`failed reading InhibitDelayMaxUSec property from logind: ${errorMessage(err)}`);
    }
    // dbus-native gives a variant as [signature tree, [value]].
    const variant = body[0] as [unknown, unknown[]] | undefined;
    const usec = variant?.[1]?.[0];
    if (typeof usec !== 'number') throw new Error('InhibitDelayMaxUSec from logind is not a uint64 as expected');
    return usec / 1000;
  }

  async listInhibitors(): Promise<Inhibitor[]> {
    const [list] = await this.bus.call({
      destination: LOGIND,
      path: LOGIND_PATH,
      interface: MANAGER,
      member: 'ListInhibitors',
    });
    return ((list ?? []) as [string, string, string, string, number, number][]).map(
      ([what, who, why, mode, uid, pid]) => ({ what, who, why, mode, uid, pid }),
    );
  }

  /** SIGHUP to systemd-logind.service through systemd, which makes logind read its configuration again. */
  async reloadConfig(): Promise<void> {
    try {
      await this.bus.call({
        destination: 'org.freedesktop.systemd1',
        path: '/org/freedesktop/systemd1',
        interface: 'org.freedesktop.systemd1.Manager',
        member: 'KillUnit',
        signature: 'ssi',
        body: ['systemd-logind.service', 'all', 1],
      });
    } catch (err) {
      throw new Error(`unable to reload logind conf: ${err instanceof DbusCallError ? err.message : String(err)}`);
    }
  }

  /** Calls `listener(true)` when a shutdown begins and `listener(false)` when it is cancelled. */
  async watchPrepareForShutdown(listener: (active: boolean) => void): Promise<void> {
    this.bus.onSignal((s) => {
      if (s.interface !== MANAGER || s.member !== 'PrepareForShutdown' || s.path !== LOGIND_PATH) return;
      if (typeof s.body[0] === 'boolean') listener(s.body[0]);
    });
    await this.bus.addMatch(`type='signal',interface='${MANAGER}',member='PrepareForShutdown',path='${LOGIND_PATH}'`);
  }
}
