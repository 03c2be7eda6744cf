// Node allocatable as the kubelet computes it with no kubeReserved or systemReserved: capacity less
// the hard eviction thresholds (bootlet evicts nothing, so these are always the kubelet's defaults).
// The one owner of what the node gives its pods: the Node's status reports it, admission fits pods
// into it, the kubepods cgroup's CPU shares are sized by it, and a memory-backed emptyDir and the
// downward API's missing limits (env and volume alike) fall back to it.
import { readFileSync, statfsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseQuantity } from './quantity.js';

/** The kubelet's default evictionHard on linux (pkg/kubelet/eviction/defaults_linux.go). */
export const DEFAULT_EVICTION_HARD: Record<string, string> = {
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
};

/** memory.available's hard threshold in bytes: below it the node is under memory pressure. */
export const EVICTION_HARD_MEMORY_BYTES = parseQuantity(DEFAULT_EVICTION_HARD['memory.available']!).value();

/** nodefs.available's hard threshold as a fraction of the file system. */
export const EVICTION_HARD_NODEFS_FRACTION = Number.parseFloat(DEFAULT_EVICTION_HARD['nodefs.available']!) / 100;

/** imagefs.available's, of the runtime's image filesystem (CRI ImageFsInfo), the same one as nodefs's on most nodes. */
export const EVICTION_HARD_IMAGEFS_FRACTION = Number.parseFloat(DEFAULT_EVICTION_HARD['imagefs.available']!) / 100;

/** What the node gives pods, as the downward API reads it for a limit a container does not set. */
export interface NodeAllocatable {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
  readonly ephemeralStorageBytes: number;
}

let cpuCount: number | undefined;

/**
 * The node's CPUs as the kubelet counts them: cadvisor's NumCores, every logical CPU of the machine
 * (os.cpus()), not availableParallelism(), which honours the agent's own CPU affinity. Read once:
 * os.cpus() reads and parses /proc/stat and /proc/cpuinfo (~0.4 ms), and admission asks at every pod
 * (2,000 times in a flood of manifests) and the downward API at every container start.
 */
export function nodeCpuCount(): number {
  // A sandbox that hides /proc/cpuinfo gives an empty list: one CPU, never none.
  return (cpuCount ??= Math.max(1, cpus().length));
}

/** Allocatable memory of a node with this much memory (default: this machine's). */
export function allocatableMemoryBytes(capacityBytes: number = totalmem()): number {
  return Math.max(0, capacityBytes - EVICTION_HARD_MEMORY_BYTES);
}

/** Allocatable ephemeral storage of a root file system this large. */
export function allocatableEphemeralStorageBytes(totalBytes: number): number {
  return Math.floor(totalBytes * (1 - EVICTION_HARD_NODEFS_FRACTION));
}

/**
 * Size and free space of the file system holding `dir`; zeros when it cannot be read. The kubelet's
 * ephemeral storage is cadvisor's rootfs: the file system of the kubelet's root directory.
 */
export function fileSystemOf(dir: string): { total: number; available: number } {
  try {
    const s = statfsSync(dir);
    return { total: s.blocks * s.bsize, available: s.bavail * s.bsize };
  } catch {
    return { total: 0, available: 0 };
  }
}

/**
 * This node's allocatable resources (of a node with `memoryCapacityBytes`, default this machine's):
 * every CPU, since nothing is reserved; memory less memory.available; and the file system of
 * `rootDir` (the agent's --root-dir) less nodefs.available, as the Node's status reports it. Without
 * a root dir ephemeral storage is 0.
 */
export function nodeAllocatable(memoryCapacityBytes: number = totalmem(), rootDir?: string): NodeAllocatable {
  const ephemeralStorageBytes =
    rootDir === undefined ? 0 : allocatableEphemeralStorageBytes(fileSystemOf(rootDir).total);
  return {
    cpuMillis: nodeCpuCount() * 1000,
    memoryBytes: allocatableMemoryBytes(memoryCapacityBytes),
    ephemeralStorageBytes,
  };
}

/**
 * The node's process-ID capacity as the kubelet counts it (pkg/kubelet/stats/pidlimit): the smaller
 * of kernel.pid_max and kernel.threads-max; undefined when neither can be read.
 */
export function nodePidCapacity(): number | undefined {
  const read = (f: string): number | undefined => {
    try {
      const n = Number.parseInt(readFileSync(f, 'utf8').trim(), 10);
      return Number.isFinite(n) && n > 0 ? n : undefined;
    } catch {
      return undefined;
    }
  };
  const found = [read('/proc/sys/kernel/pid_max'), read('/proc/sys/kernel/threads-max')].filter(
    (n): n is number => n !== undefined,
  );
  return found.length > 0 ? Math.min(...found) : undefined;
}
