// What the node shutdown manager asks of logind (and of systemd, to make logind reload): its
// InhibitDelayMaxUSec, the inhibitors it holds, and the PrepareForShutdown signal.
import { DbusCallError, type DbusConnection } from '../dbus/dbus-connection.js';
import { CountedLine } from '../log/counted-line.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/error-message.js';

const LOGIND = 'org.freedesktop.login1';
const LOGIND_PATH = '/org/freedesktop/login1';
const MANAGER = 'org.freedesktop.login1.Manager';
/** The bus daemon: its name, interface and the sender of its own signals. */
const BUS = 'org.freedesktop.DBus';

export interface Inhibitor {
  readonly what: string;
  readonly who: string;
  readonly why: string;
  readonly mode: string;
  readonly uid: number;
  readonly pid: number;
}

export class Logind {
  private readonly forged: CountedLine;

  constructor(
    private readonly bus: DbusConnection,
    logger: Logger,
  ) {
    this.forged = new CountedLine(
      logger,
      'Ignored a PrepareForShutdown signal that did not come from logind (the owner of org.freedesktop.login1)',
    );
  }

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

  /**
   * Calls `listener(true)` when a shutdown begins and `listener(false)` when it is cancelled. Only
   * logind's signals count: any local user can emit a PrepareForShutdown on the system bus (or send
   * one to this connection alone, which no match rule filters), and the kubelet acts on them all
   * (kubernetes#97951). A signal is taken only from the unique name that owns org.freedesktop.login1
   * (GetNameOwner, kept current with the bus's NameOwnerChanged); any other is one counted log line.
   */
  async watchPrepareForShutdown(listener: (active: boolean) => void): Promise<void> {
    let owner: string | undefined;
    this.bus.onSignal((s) => {
      if (
        s.sender === BUS &&
        s.interface === BUS &&
        s.member === 'NameOwnerChanged' &&
        s.body[0] === LOGIND &&
        typeof s.body[2] === 'string'
      ) {
        owner = s.body[2] === '' ? undefined : s.body[2];
        return;
      }
      if (s.interface !== MANAGER || s.member !== 'PrepareForShutdown' || s.path !== LOGIND_PATH) return;
      if (owner === undefined || s.sender !== owner) {
        this.forged.hit({ sender: s.sender ?? '(none)', logind: owner ?? '(no owner)' });
        return;
      }
      if (typeof s.body[0] === 'boolean') listener(s.body[0]);
    });
    // The owner is followed before it is asked, and asked before any PrepareForShutdown is wanted.
    await this.bus.addMatch(
      `type='signal',sender='${BUS}',interface='${BUS}',member='NameOwnerChanged',arg0='${LOGIND}'`,
    );
    owner = await this.nameOwner();
    await this.bus.addMatch(
      `type='signal',sender='${LOGIND}',interface='${MANAGER}',member='PrepareForShutdown',path='${LOGIND_PATH}'`,
    );
  }

  /** The unique name that owns org.freedesktop.login1 now; undefined when nobody does. */
  private async nameOwner(): Promise<string | undefined> {
    try {
      const [name] = await this.bus.call({
        destination: BUS,
        path: '/org/freedesktop/DBus',
        interface: BUS,
        member: 'GetNameOwner',
        signature: 's',
        body: [LOGIND],
      });
      return typeof name === 'string' ? name : undefined;
    } catch (err) {
      if (err instanceof DbusCallError && err.dbusName === 'org.freedesktop.DBus.Error.NameHasNoOwner')
        return undefined;
      throw err;
    }
  }
}
