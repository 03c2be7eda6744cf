// A CgroupManager over an in-memory tree, recording what was asked of it.
import { literalName, type CgroupDriver, type CgroupName } from '../../../src/cm/cgroup-name.js';
import type { CgroupManager } from '../../../src/cm/cgroup-manager.js';
import type { ResourceConfig } from '../../../src/cm/pod-resources.js';

export class FakeCgroupManager implements CgroupManager {
  readonly cgroupVersion = 1 as const;
  /** literal name → the resources last set */
  readonly cgroups = new Map<string, ResourceConfig>();
  /** literal name → child cgroups (what a runtime put inside) */
  readonly childrenOf = new Map<string, string[]>();
  readonly calls: string[] = [];
  /** Names whose destroy fails this many more times with EBUSY. */
  readonly busy = new Map<string, number>();

  constructor(readonly driver: CgroupDriver = 'cgroupfs') {}

  name(n: CgroupName): string {
    return literalName(this.driver, n);
  }
  async exists(n: CgroupName): Promise<boolean> {
    return this.cgroups.has(this.name(n));
  }
  async ensure(n: CgroupName, r: ResourceConfig): Promise<void> {
    this.calls.push(`ensure ${this.name(n)} ${JSON.stringify(r)}`);
    this.cgroups.set(this.name(n), { ...this.cgroups.get(this.name(n)), ...r });
  }
  async update(n: CgroupName, r: ResourceConfig): Promise<void> {
    this.calls.push(`update ${this.name(n)} ${JSON.stringify(r)}`);
    if (!this.cgroups.has(this.name(n))) throw new Error(`no cgroup ${this.name(n)}`);
    this.cgroups.set(this.name(n), { ...this.cgroups.get(this.name(n)), ...r });
  }
  async destroy(n: CgroupName): Promise<'removed' | 'busy'> {
    const name = this.name(n);
    const left = this.busy.get(name) ?? 0;
    if (left > 0) {
      this.busy.set(name, left - 1);
      this.calls.push(`destroy ${name} busy`);
      return 'busy';
    }
    if (this.cgroups.delete(name)) this.calls.push(`destroy ${name}`);
    return 'removed';
  }
  async children(n: CgroupName): Promise<string[]> {
    return this.childrenOf.get(this.name(n)) ?? [];
  }
  close(): void {}
}
