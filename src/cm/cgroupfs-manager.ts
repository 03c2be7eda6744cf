// The cgroupfs driver: bootlet makes the cgroup directories and writes their limits itself, in
// every v1 hierarchy or in the unified v2 tree, as libcontainer's fs managers do for the kubelet.
import { mkdir, readdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { literalName, type CgroupName } from './cgroup-name.js';
import { cpuSharesToWeight, type CgroupManager } from './cgroup-manager.js';
import type { CgroupSubsystems } from './cgroup-subsystems.js';
import type { ResourceConfig } from './pod-resources.js';

/** The v1 hierarchies whose absence means the cgroup does not exist (the kubelet's Validate list). */
const V1_REQUIRED = ['cpu', 'cpuacct', 'cpuset', 'memory', 'systemd', 'pids', 'hugetlb'];
/** The v2 controllers the kubelet uses, enabled down the tree so the pod cgroup has them. */
const V2_CONTROLLERS = ['cpu', 'cpuset', 'memory', 'pids', 'hugetlb', 'io'];

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

async function exists(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

async function readTrimmed(p: string): Promise<string> {
  return (await readFile(p, 'utf8')).trim();
}

export class CgroupfsFiles {
  constructor(
    readonly subsystems: CgroupSubsystems,
    /** How a name is spelled on disk: the cgroupfs driver's own form, or systemd's slices. */
    private readonly spell: (name: CgroupName) => string,
  ) {}

  /** Directory of the cgroup in each hierarchy (v1: subsystem → dir; v2: '' → dir). */
  dirs(name: CgroupName): Map<string, string> {
    const rel = this.spell(name);
    if (this.subsystems.version === 2) return new Map([['', path.join(this.subsystems.mountpoint, rel)]]);
    const out = new Map<string, string>();
    for (const [sub, mp] of this.subsystems.mountpoints) out.set(sub, path.join(mp, rel));
    return out;
  }

  async exists(name: CgroupName): Promise<boolean> {
    for (const [sub, dir] of this.dirs(name)) {
      if (this.subsystems.version === 1 && !V1_REQUIRED.includes(sub)) continue;
      if (!(await exists(dir))) return false;
    }
    return true;
  }

  async anyExists(name: CgroupName): Promise<boolean> {
    for (const dir of this.dirs(name).values()) if (await exists(dir)) return true;
    return false;
  }

  async create(name: CgroupName): Promise<void> {
    if (this.subsystems.version === 2) return this.createV2(this.dirs(name).get('')!);
    for (const [sub, dir] of this.dirs(name)) {
      if (sub === 'cpuset') await this.createCpuset(this.subsystems.mountpoints.get('cpuset')!, dir);
      else await mkdir(dir, { recursive: true });
    }
  }

  /** A new v1 cpuset starts with no cpus and no mems and takes no task; each level copies its parent's. */
  private async createCpuset(mountpoint: string, dir: string): Promise<void> {
    const rel = path.relative(mountpoint, dir).split(path.sep).filter(Boolean);
    let cur = mountpoint;
    for (const part of rel) {
      const parent = cur;
      cur = path.join(cur, part);
      try {
        await mkdir(cur);
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw err;
      }
      for (const f of ['cpuset.cpus', 'cpuset.mems']) {
        if ((await readTrimmed(path.join(cur, f))) === '') await writeFile(path.join(cur, f), await readTrimmed(path.join(parent, f)));
      }
    }
  }

  /** Each level enables, for its children, the controllers it has, then the child is made. */
  private async createV2(dir: string): Promise<void> {
    const root = (this.subsystems as { mountpoint: string }).mountpoint;
    const rel = path.relative(root, dir).split(path.sep).filter(Boolean);
    let cur = root;
    for (const part of rel) {
      const available = (await readTrimmed(path.join(cur, 'cgroup.controllers'))).split(/\s+/);
      const enabled = new Set((await readTrimmed(path.join(cur, 'cgroup.subtree_control'))).split(/\s+/));
      for (const c of V2_CONTROLLERS) {
        if (!available.includes(c) || enabled.has(c)) continue;
        // One at a time: a controller that cannot be enabled here must not stop the others.
        await writeFile(path.join(cur, 'cgroup.subtree_control'), `+${c}`).catch(() => undefined);
      }
      cur = path.join(cur, part);
      try {
        await mkdir(cur);
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw err;
      }
    }
  }

  async set(name: CgroupName, r: ResourceConfig): Promise<void> {
    const dirs = this.dirs(name);
    if (this.subsystems.version === 2) {
      const dir = dirs.get('')!;
      if (r.cpuShares !== undefined) await writeFile(path.join(dir, 'cpu.weight'), String(cpuSharesToWeight(r.cpuShares)));
      if (r.cpuQuota !== undefined || r.cpuPeriod !== undefined) {
        const quota = r.cpuQuota === undefined || r.cpuQuota <= 0 ? 'max' : String(r.cpuQuota);
        await writeFile(path.join(dir, 'cpu.max'), r.cpuPeriod ? `${quota} ${r.cpuPeriod}` : quota);
      }
      if (r.memoryLimit !== undefined && r.memoryLimit !== 0) await writeFile(path.join(dir, 'memory.max'), r.memoryLimit < 0 ? 'max' : String(r.memoryLimit));
      if (r.pidsLimit !== undefined) await writeFile(path.join(dir, 'pids.max'), r.pidsLimit < 0 ? 'max' : String(r.pidsLimit));
      return;
    }
    const cpu = dirs.get('cpu');
    if (cpu) {
      if (r.cpuShares !== undefined) await writeFile(path.join(cpu, 'cpu.shares'), String(r.cpuShares));
      // A shorter period may be refused while the old quota is in place; then it goes after the quota.
      const period = path.join(cpu, 'cpu.cfs_period_us');
      let periodLater = false;
      if (r.cpuPeriod) {
        try {
          await writeFile(period, String(r.cpuPeriod));
        } catch {
          periodLater = true;
        }
      }
      if (r.cpuQuota !== undefined && r.cpuQuota !== 0) await writeFile(path.join(cpu, 'cpu.cfs_quota_us'), String(r.cpuQuota));
      if (periodLater) await writeFile(period, String(r.cpuPeriod));
    }
    const memory = dirs.get('memory');
    if (memory && r.memoryLimit !== undefined && r.memoryLimit !== 0) await writeFile(path.join(memory, 'memory.limit_in_bytes'), String(r.memoryLimit));
    const pids = dirs.get('pids');
    if (pids && r.pidsLimit !== undefined) await writeFile(path.join(pids, 'pids.max'), r.pidsLimit < 0 ? 'max' : String(r.pidsLimit));
  }

  async remove(name: CgroupName): Promise<'removed' | 'busy'> {
    let busy = false;
    for (const dir of this.dirs(name).values()) {
      try {
        await rmdir(dir);
      } catch (err) {
        if (errno(err) === 'ENOENT') continue;
        if (errno(err) === 'EBUSY' || errno(err) === 'ENOTEMPTY') busy = true;
        else throw err;
      }
    }
    return busy ? 'busy' : 'removed';
  }

  async children(name: CgroupName): Promise<string[]> {
    const dirs = this.dirs(name);
    const dir = this.subsystems.version === 2 ? dirs.get('') : (dirs.get('memory') ?? dirs.get('cpu') ?? [...dirs.values()][0]);
    if (!dir) return [];
    try {
      return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return [];
    }
  }
}

export class CgroupfsManager implements CgroupManager {
  readonly driver = 'cgroupfs' as const;
  readonly cgroupVersion: 1 | 2;
  readonly files: CgroupfsFiles;

  constructor(subsystems: CgroupSubsystems) {
    this.cgroupVersion = subsystems.version;
    this.files = new CgroupfsFiles(subsystems, (n) => literalName('cgroupfs', n));
  }

  name(name: CgroupName): string {
    return literalName('cgroupfs', name);
  }

  exists(name: CgroupName): Promise<boolean> {
    return this.files.exists(name);
  }

  async ensure(name: CgroupName, resources: ResourceConfig): Promise<void> {
    await this.files.create(name);
    await this.files.set(name, resources);
  }

  update(name: CgroupName, resources: ResourceConfig): Promise<void> {
    return this.files.set(name, resources);
  }

  destroy(name: CgroupName): Promise<'removed' | 'busy'> {
    return this.files.remove(name);
  }

  children(name: CgroupName): Promise<string[]> {
    return this.files.children(name);
  }

  close(): void {}
}
