import { describe, expect, it, vi } from 'vitest';
import { cgroupName, ROOT_CGROUP } from '../../../src/cm/cgroup-name.js';
import { DbusCallError } from '../../../src/dbus/dbus-connection.js';
import type { SystemdDbus, UnitProperty } from '../../../src/cm/systemd-dbus.js';
import { cpuQuotaPerSecUSec, resourceProperties, SystemdManager } from '../../../src/cm/systemd-manager.js';

const MAX = 2n ** 64n - 1n;

describe('systemd unit properties', () => {
  it('v1: CPUShares, MemoryLimit, quota per second rounded up to 10 ms, TasksMax', () => {
    expect(
      resourceProperties({ cpuShares: 512, cpuQuota: 150000, cpuPeriod: 100000, memoryLimit: 1024, pidsLimit: 100 }, 1),
    ).toEqual([
      ['CPUShares', 't', 512n],
      ['MemoryLimit', 't', 1024n],
      ['CPUQuotaPeriodUSec', 't', 100000n],
      ['CPUQuotaPerSecUSec', 't', 1_500_000n],
      ['TasksMax', 't', 100n],
    ]);
    expect(cpuQuotaPerSecUSec(1000, 100000)).toBe(10000n);
    expect(cpuQuotaPerSecUSec(1500, 100000)).toBe(20000n);
    expect(cpuQuotaPerSecUSec(-1, 100000)).toBe(MAX);
  });

  it('v2: CPUWeight and MemoryMax; unlimited is infinity', () => {
    expect(resourceProperties({ cpuShares: 2, memoryLimit: -1, pidsLimit: -1 }, 2)).toEqual([
      ['CPUWeight', 't', 1n],
      ['MemoryMax', 't', MAX],
      ['TasksMax', 't', MAX],
    ]);
    expect(resourceProperties({ cpuShares: 1024 }, 2)).toEqual([['CPUWeight', 't', 39n]]);
  });
});

class FakeDbus {
  readonly units = new Map<string, readonly UnitProperty[]>();
  readonly calls: string[] = [];
  closed = false;
  async startTransientUnit(unit: string, props: readonly UnitProperty[]): Promise<void> {
    this.calls.push(`start ${unit}`);
    if (this.units.has(unit))
      throw new DbusCallError('org.freedesktop.systemd1.UnitExists', `Unit ${unit} was already loaded`);
    this.units.set(unit, props);
  }
  async setUnitProperties(unit: string, props: readonly UnitProperty[]): Promise<void> {
    this.calls.push(`set ${unit} ${props.map((p) => p[0]).join(',')}`);
  }
  async stopUnit(unit: string): Promise<void> {
    this.calls.push(`stop ${unit}`);
    this.units.delete(unit);
  }
  close(): void {
    this.closed = true;
  }
}

describe('SystemdManager', () => {
  const subsystems = { version: 2 as const, mountpoint: '/nonexistent-cgroup-root' };

  it('makes a slice that wants its parent, with accounting and limits; an existing one gets new properties', async () => {
    const dbus = new FakeDbus();
    const m = new SystemdManager(subsystems, async () => dbus as unknown as SystemdDbus);
    const pod = cgroupName(ROOT_CGROUP, 'kubepods', 'burstable', 'pod1-2');
    await m.ensure(pod, { cpuShares: 1024 });
    const props = new Map(dbus.units.get('kubepods-burstable-pod1_2.slice')!.map(([n, , v]) => [n, v]));
    expect(props.get('Wants')).toEqual(['kubepods-burstable.slice']);
    expect(props.get('DefaultDependencies')).toBe(false);
    expect(props.get('CPUAccounting')).toBe(true);
    expect(props.get('IOAccounting')).toBe(true);
    expect(props.get('CPUWeight')).toBe(39n);
    await m.ensure(pod, { cpuShares: 2 });
    expect(dbus.calls.at(-1)).toBe('set kubepods-burstable-pod1_2.slice CPUWeight');
    await m.ensure(cgroupName(ROOT_CGROUP, 'kubepods'), {});
    expect(new Map(dbus.units.get('kubepods.slice')!.map(([n, , v]) => [n, v])).get('Wants')).toEqual(['-.slice']);
    expect(m.name(pod)).toBe('/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice');
  });

  it('lets a call in flight finish before it closes the connection (an agent stopped by systemctl restart)', async () => {
    const dbus = new FakeDbus();
    let answer: () => void = () => undefined;
    dbus.setUnitProperties = (unit) =>
      new Promise<void>((resolve) => {
        dbus.calls.push(`set ${unit}`);
        answer = resolve;
      });
    const m = new SystemdManager(subsystems, async () => dbus as unknown as SystemdDbus);
    const update = m.update(cgroupName(ROOT_CGROUP, 'kubepods', 'burstable'), { cpuShares: 2 });
    await vi.waitFor(() => expect(dbus.calls).toEqual(['set kubepods-burstable.slice']));
    m.close();
    await new Promise((r) => setImmediate(r));
    expect(dbus.closed).toBe(false);
    answer();
    await expect(update).resolves.toBeUndefined();
    await vi.waitFor(() => expect(dbus.closed).toBe(true));
  });
});
