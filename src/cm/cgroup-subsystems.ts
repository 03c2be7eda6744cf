// Which cgroup hierarchies the node has: one unified cgroup2 tree at /sys/fs/cgroup (v2), or one
// v1 hierarchy per controller (cpu, memory, pids, ... and the named `systemd` one), each at its
// mount point. Read from /proc/self/mountinfo as the kubelet's GetCgroupSubsystems does.
import { readFileSync, statfsSync } from 'node:fs';

export const UNIFIED_MOUNTPOINT = '/sys/fs/cgroup';
const CGROUP2_SUPER_MAGIC = 0x63677270;

export type CgroupSubsystems =
  | { version: 2; mountpoint: string }
  | {
      version: 1;
      /** Subsystem (cpu, memory, systemd for name=systemd, ...) → mount point; the shortest wins. */
      mountpoints: ReadonlyMap<string, string>;
    };

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

export function parseV1Mounts(mountinfo: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const pre = line.slice(0, sep).split(' ');
    const [fstype, , superOpts = ''] = line.slice(sep + 3).split(' ');
    if (fstype !== 'cgroup') continue;
    const mountpoint = unescapeMountPath(pre[4] ?? '');
    for (const opt of superOpts.split(',')) {
      const sub = opt.startsWith('name=') ? opt.slice('name='.length) : KNOWN_V1.has(opt) ? opt : undefined;
      if (sub === undefined || sub === '') continue;
      const prev = out.get(sub);
      if (prev === undefined || mountpoint.length < prev.length) out.set(sub, mountpoint);
    }
  }
  return out;
}

const KNOWN_V1 = new Set([
  'cpu',
  'cpuacct',
  'cpuset',
  'memory',
  'devices',
  'freezer',
  'blkio',
  'pids',
  'hugetlb',
  'net_cls',
  'net_prio',
  'perf_event',
  'rdma',
  'misc',
]);

/** libcontainer's IsCgroup2UnifiedMode: /sys/fs/cgroup is a cgroup2 file system (no v1 hierarchy). */
export function isCgroup2UnifiedMode(): boolean {
  try {
    return statfsSync(UNIFIED_MOUNTPOINT).type === CGROUP2_SUPER_MAGIC;
  } catch {
    return false; // no /sys/fs/cgroup: the v1 lookup reports it
  }
}

export function detectCgroupSubsystems(): CgroupSubsystems {
  if (isCgroup2UnifiedMode()) return { version: 2, mountpoint: UNIFIED_MOUNTPOINT };
  const mountpoints = parseV1Mounts(readFileSync('/proc/self/mountinfo', 'utf8'));
  if (mountpoints.size === 0)
    throw new Error('no cgroup hierarchy is mounted (neither cgroup2 at /sys/fs/cgroup nor any cgroup v1 controller)');
  return { version: 1, mountpoints };
}
