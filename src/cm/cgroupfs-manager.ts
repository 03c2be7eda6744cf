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
/** What a new v1 cpuset must be given before a task may join it. */
const CPUSET_FILES = ['cpuset.cpus', 'cpuset.mems'];

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

  // The hierarchies are independent of each other: each is looked at, made or written at once
  // beside the others. On the pod start path, one after the other, a v1 node's dozen hierarchies
  // took a dozen file-system round trips, before the pod's sandbox and again before each container.
  async exists(name: CgroupName): Promise<boolean> {
    const dirs = [...this.dirs(name)].filter(([sub]) => this.subsystems.version === 2 || V1_REQUIRED.includes(sub));
    return (await Promise.all(dirs.map(([, dir]) => exists(dir)))).every(Boolean);
  }

  async anyExists(name: CgroupName): Promise<boolean> {
    return (await Promise.all([...this.dirs(name).values()].map(exists))).some(Boolean);
  }

  async create(name: CgroupName): Promise<void> {
    const subsystems = this.subsystems;
    if (subsystems.version === 2) return this.createV2(this.dirs(name).get('')!);
    await Promise.all(
      [...this.dirs(name)].map(([sub, dir]) =>
        sub === 'cpuset'
          ? this.createCpuset(subsystems.mountpoints.get('cpuset')!, dir)
          : mkdir(dir, { recursive: true }),
      ),
    );
  }

  /** A new v1 cpuset starts with no cpus and no mems and takes no task; each level copies its parent's. */
  private async createCpuset(mountpoint: string, dir: string): Promise<void> {
    // A pod's cgroup is new under levels made at start (kubepods and its QoS classes): it takes its
    // parent's values, and the walk below, a dozen file-system round trips, is left for the rest.
    if (dir !== mountpoint && (await this.createCpusetLeaf(dir))) return;
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
      for (const f of CPUSET_FILES) {
        if ((await readTrimmed(path.join(cur, f))) === '')
          await writeFile(path.join(cur, f), await readTrimmed(path.join(parent, f)));
      }
    }
  }

  /** True when `dir` was new and took its parent's cpus and mems; false when the walk is needed. */
  private async createCpusetLeaf(dir: string): Promise<boolean> {
    try {
      await mkdir(dir);
    } catch (err) {
      if (errno(err) === 'EEXIST' || errno(err) === 'ENOENT') return false;
      throw err;
    }
    const parent = path.dirname(dir);
    const values = await Promise.all(CPUSET_FILES.map((f) => readTrimmed(path.join(parent, f))));
    // A parent with none to give: the walk mends the levels above.
    if (values.some((v) => v === '')) return false;
    await Promise.all(CPUSET_FILES.map((f, i) => writeFile(path.join(dir, f), values[i]!)));
    return true;
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
      if (r.cpuShares !== undefined)
        await writeFile(path.join(dir, 'cpu.weight'), String(cpuSharesToWeight(r.cpuShares)));
      if (r.cpuQuota !== undefined || r.cpuPeriod !== undefined) {
        const quota = r.cpuQuota === undefined || r.cpuQuota <= 0 ? 'max' : String(r.cpuQuota);
        await writeFile(path.join(dir, 'cpu.max'), r.cpuPeriod ? `${quota} ${r.cpuPeriod}` : quota);
      }
      if (r.memoryLimit !== undefined && r.memoryLimit !== 0)
        await writeFile(path.join(dir, 'memory.max'), r.memoryLimit < 0 ? 'max' : String(r.memoryLimit));
      if (r.pidsLimit !== undefined)
        await writeFile(path.join(dir, 'pids.max'), r.pidsLimit < 0 ? 'max' : String(r.pidsLimit));
      return;
    }
    const cpu = dirs.get('cpu');
    const memory = dirs.get('memory');
    const pids = dirs.get('pids');
    await Promise.all([
      cpu ? this.setV1Cpu(cpu, r) : undefined,
      memory && r.memoryLimit !== undefined && r.memoryLimit !== 0
        ? writeFile(path.join(memory, 'memory.limit_in_bytes'), String(r.memoryLimit))
        : undefined,
      pids && r.pidsLimit !== undefined
        ? writeFile(path.join(pids, 'pids.max'), r.pidsLimit < 0 ? 'max' : String(r.pidsLimit))
        : undefined,
    ]);
  }

  private async setV1Cpu(cpu: string, r: ResourceConfig): Promise<void> {
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
    if (r.cpuQuota !== undefined && r.cpuQuota !== 0)
      await writeFile(path.join(cpu, 'cpu.cfs_quota_us'), String(r.cpuQuota));
    if (periodLater) await writeFile(period, String(r.cpuPeriod));
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
    const dir =
      this.subsystems.version === 2 ? dirs.get('') : (dirs.get('memory') ?? dirs.get('cpu') ?? [...dirs.values()][0]);
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
