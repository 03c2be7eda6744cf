// The systemd driver: systemd owns the cgroup tree, so the QoS and pod slices are transient
// units made and changed over D-Bus with their limits as unit properties, as libcontainer's
// systemd manager does for the kubelet. Files written behind systemd's back would be reset the
// next time it realizes the slice (when runc starts a container scope in it).
import { literalName, systemdUnitName, type CgroupName } from './cgroup-name.js';
import { cpuSharesToWeight, type CgroupManager } from './cgroup-manager.js';
import type { CgroupSubsystems } from './cgroup-subsystems.js';
import { CgroupfsFiles } from './cgroupfs-manager.js';
import type { ResourceConfig } from './pod-resources.js';
import { DbusCallError } from '../dbus/dbus-connection.js';
import { SystemdDbus, type UnitProperty } from './systemd-dbus.js';

const UINT64_MAX = 2n ** 64n - 1n;
/** How long close() lets calls in flight finish. */
const CLOSE_WAIT_MS = 5_000;

/** systemd keeps CPU quota as a percentage; runc rounds up to the next 10 ms per second the same way. */
export function cpuQuotaPerSecUSec(quotaUs: number, periodUs: number): bigint {
  if (quotaUs <= 0) return UINT64_MAX;
  let perSec = (BigInt(quotaUs) * 1_000_000n) / BigInt(periodUs);
  if (perSec % 10_000n !== 0n) perSec = (perSec / 10_000n + 1n) * 10_000n;
  return perSec;
}

export function resourceProperties(r: ResourceConfig, cgroupVersion: 1 | 2): UnitProperty[] {
  const props: UnitProperty[] = [];
  if (r.cpuShares !== undefined) {
    props.push(
      cgroupVersion === 2
        ? ['CPUWeight', 't', BigInt(cpuSharesToWeight(r.cpuShares))]
        : ['CPUShares', 't', BigInt(r.cpuShares)],
    );
  }
  if (r.memoryLimit !== undefined && r.memoryLimit !== 0) {
    props.push([
      cgroupVersion === 2 ? 'MemoryMax' : 'MemoryLimit',
      't',
      r.memoryLimit < 0 ? UINT64_MAX : BigInt(r.memoryLimit),
    ]);
  }
  if ((r.cpuQuota !== undefined && r.cpuQuota !== 0) || r.cpuPeriod) {
    const period = r.cpuPeriod || 100_000;
    if (r.cpuPeriod) props.push(['CPUQuotaPeriodUSec', 't', BigInt(period)]);
    props.push(['CPUQuotaPerSecUSec', 't', cpuQuotaPerSecUSec(r.cpuQuota ?? -1, period)]);
  }
  if (r.pidsLimit !== undefined) props.push(['TasksMax', 't', r.pidsLimit < 0 ? UINT64_MAX : BigInt(r.pidsLimit)]);
  return props;
}

/** The slice a slice lives in, for Wants=: kubepods-burstable.slice for kubepods-burstable-podX.slice. */
function parentSlice(name: CgroupName): string {
  return name.length <= 1 ? '-.slice' : systemdUnitName(name.slice(0, -1));
}

export class SystemdManager implements CgroupManager {
  readonly driver = 'systemd' as const;
  readonly cgroupVersion: 1 | 2;
  private readonly files: CgroupfsFiles;
  private conn: Promise<SystemdDbus> | undefined;
  /** Calls to systemd in flight: close() lets them finish before it closes the connection. */
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    subsystems: CgroupSubsystems,
    private readonly connect: () => Promise<SystemdDbus> = () => SystemdDbus.connectAny(),
  ) {
    this.cgroupVersion = subsystems.version;
    this.files = new CgroupfsFiles(subsystems, (n) => literalName('systemd', n));
  }

  /** One connection, made again after it breaks (systemd re-executed, socket closed). */
  private dbus(): Promise<SystemdDbus> {
    const current = this.conn;
    if (current) {
      return current.then(
        (c) => (c.closed ? this.reconnect() : c),
        () => this.reconnect(),
      );
    }
    return this.reconnect();
  }

  private reconnect(): Promise<SystemdDbus> {
    this.conn = this.connect();
    return this.conn;
  }

  name(name: CgroupName): string {
    return literalName('systemd', name);
  }

  exists(name: CgroupName): Promise<boolean> {
    return this.files.exists(name);
  }

  /** Runs `op` as a call the connection's close waits for. */
  private track<T>(op: () => Promise<T>): Promise<T> {
    const p = op();
    this.inflight.add(p);
    const done = () => void this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  ensure(name: CgroupName, resources: ResourceConfig): Promise<void> {
    return this.track(() => this.ensureNow(name, resources));
  }

  private async ensureNow(name: CgroupName, resources: ResourceConfig): Promise<void> {
    const unit = systemdUnitName(name);
    const dbus = await this.dbus();
    const resourceProps = resourceProperties(resources, this.cgroupVersion);
    try {
      await dbus.startTransientUnit(unit, [
        ['Description', 's', `bootlet cgroup ${unit}`],
        ['Wants', 'as', [parentSlice(name)]],
        ['DefaultDependencies', 'b', false],
        ['MemoryAccounting', 'b', true],
        ['CPUAccounting', 'b', true],
        [this.cgroupVersion === 2 ? 'IOAccounting' : 'BlockIOAccounting', 'b', true],
        ['TasksAccounting', 'b', true],
        ...resourceProps,
      ]);
    } catch (err) {
      // Loaded already: made before a restart of bootlet, or implied by a unit inside it.
      if (!(err instanceof DbusCallError && err.dbusName === 'org.freedesktop.systemd1.UnitExists')) throw err;
      if (resourceProps.length > 0) await dbus.setUnitProperties(unit, resourceProps);
    }
    // systemd leaves the v1 hierarchies it does not manage (cpuset, freezer, ...) alone; the
    // cgroup exists there too, as libcontainer makes it.
    if (this.cgroupVersion === 1) await this.files.create(name);
  }

  update(name: CgroupName, resources: ResourceConfig): Promise<void> {
    return this.track(async () => {
      const props = resourceProperties(resources, this.cgroupVersion);
      if (props.length > 0) await (await this.dbus()).setUnitProperties(systemdUnitName(name), props);
    });
  }

  destroy(name: CgroupName): Promise<'removed' | 'busy'> {
    return this.track(() => this.destroyNow(name));
  }

  private async destroyNow(name: CgroupName): Promise<'removed' | 'busy'> {
    if (!(await this.files.anyExists(name))) return 'removed';
    // Stopping a slice stops everything in it: only an empty one is stopped.
    if ((await this.files.children(name)).length > 0) return 'busy';
    await (await this.dbus()).stopUnit(systemdUnitName(name));
    return this.files.remove(name);
  }

  children(name: CgroupName): Promise<string[]> {
    return this.files.children(name);
  }

  /**
   * Closes the connection once the calls in flight have had their answer (at most CLOSE_WAIT_MS): an
   * agent stopped by `systemctl restart kubelet` or a power-off must not cut a pod's sync short with
   * an error that is only its own shutdown.
   */
  close(): void {
    const conn = this.conn;
    if (!conn) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_WAIT_MS);
      timer.unref();
    });
    // Until then a call in flight keeps the connection it has (dbus() hands it out still).
    void Promise.race([Promise.allSettled([...this.inflight]), waited]).then(() => {
      clearTimeout(timer);
      if (this.conn === conn) this.conn = undefined;
      conn.then(
        (c) => c.close(),
        () => undefined,
      );
    });
  }
}
