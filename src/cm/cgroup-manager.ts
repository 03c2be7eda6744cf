// What the QoS and pod cgroup code asks of a cgroup driver. Two implementations: cgroupfs-manager
// (bootlet writes the cgroup files itself) and systemd-manager (systemd owns the tree and is asked
// over D-Bus), as the kubelet's CgroupManager has a cgroupfs and a systemd flavour.
import type { CgroupDriver, CgroupName } from './cgroup-name.js';
import type { ResourceConfig } from './pod-resources.js';

export interface CgroupManager {
  readonly driver: CgroupDriver;
  readonly cgroupVersion: 1 | 2;
  /** The cgroup's path in cgroupfs form under this driver (what the CRI gets as a parent). */
  name(name: CgroupName): string;
  /** Whether the cgroup exists in every hierarchy that matters. */
  exists(name: CgroupName): Promise<boolean>;
  /** Creates the cgroup if needed and sets `resources` on it. */
  ensure(name: CgroupName, resources: ResourceConfig): Promise<void>;
  /** Sets `resources` on an existing cgroup. */
  update(name: CgroupName, resources: ResourceConfig): Promise<void>;
  /** Removes the cgroup; 'busy' while a process or a child cgroup is still in it. */
  destroy(name: CgroupName): Promise<'removed' | 'busy'>;
  /** Names of the child cgroups (directories) of `name`, in one hierarchy; [] if it does not exist. */
  children(name: CgroupName): Promise<string[]>;
  close(): void;
}

/** cgroup v2 cpu.weight from v1 cpu.shares, the kubelet's linear mapping of [2, 262144] onto [1, 10000]. */
export function cpuSharesToWeight(shares: number): number {
  if (shares >= 262144) return 10000;
  return 1 + Math.floor(((Math.max(2, shares) - 2) * 9999) / 262142);
}
