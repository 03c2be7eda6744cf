// The machine facts a Node reports (OS, kernel, architecture, capacity) and the pressure checks
// behind its MemoryPressure / DiskPressure / PIDPressure conditions, read from /proc and statfs.
import { readFileSync } from 'node:fs';
import { release, totalmem } from 'node:os';
import type { NodeRuntimeHandler, Taint } from 'kubernetes-types/core/v1';
import {
  EVICTION_HARD_IMAGEFS_FRACTION,
  EVICTION_HARD_MEMORY_BYTES,
  EVICTION_HARD_NODEFS_FRACTION,
  fileSystemOf,
  nodeAllocatable,
  nodeCpuCount,
} from '../k8s/node-allocatable.js';
import { defaultNodeLabels } from '../k8s/node-labels.js';

/** Resource amounts as Kubernetes quantities ('2', '4014592Ki', '110'). */
export type ResourceList = Record<string, string>;

/** Node conditions the agent can observe on its own, beside runtime readiness. */
export interface NodePressure {
  memory: boolean;
  disk: boolean;
  pid: boolean;
}

/** What the Node object is built from. `collectNodeInfo()` fills the machine facts. */
export interface NodeInfoSource {
  readonly nodeName: string;
  readonly nodeIP: string;
  /** As the runtime names itself: `containerd://1.6.20`. */
  readonly runtimeVersion: string;
  /** bootlet's version, shown as the kubelet version: `v0.1.0-bootlet`. */
  readonly kubeletVersion: string;
  /** `--node-labels`. */
  readonly labels: Readonly<Record<string, string>>;
  /** `--register-with-taints`. */
  readonly taints: readonly Taint[];
  /** `port`: where the kubelet API listens, shown as daemonEndpoints.kubeletEndpoint (default 10250). */
  readonly kubeletPort?: number;
  runtimeReady(): boolean;
  /**
   * Why the runtime's network is not ready, as the kubelet words it (`container runtime network not
   * ready: NetworkReady=false reason:... message:...`); undefined when it is. Ready is False meanwhile.
   */
  networkNotReady?(): string | undefined;
  /** The node is shutting down (graceful node shutdown): Ready is False with the kubelet's message. */
  shuttingDown?(): boolean;
  /** The runtime's handlers and their features, as status.runtimeHandlers reports them (none before Status answered). */
  runtimeHandlers?(): readonly NodeRuntimeHandler[];
  /** The Node's status.features from the runtime's own (KEP-3619); undefined while the runtime reports none. */
  runtimeFeatures?(): { supplementalGroupsPolicy: boolean } | undefined;
  /** status.declaredFeatures (KEP-5328): the declared features the node implements, sorted; none: omitted. */
  declaredFeatures?(): readonly string[];
  readonly osImage: string;
  readonly kernelVersion: string;
  /** GOARCH spelling: amd64, arm64, ... */
  readonly architecture: string;
  readonly operatingSystem: string;
  readonly machineID: string;
  readonly bootID: string;
  readonly systemUUID: string;
  capacity(): ResourceList;
  allocatable(): ResourceList;
  pressure(): NodePressure;
}

/** The Node's labels as the agent registers it (the kubelet's initialNode): its own, then `--node-labels`. */
export function initialNodeLabels(info: NodeInfoSource): Record<string, string> {
  return { ...defaultNodeLabels(info), ...info.labels };
}

/** `maxPods` default of the kubelet. */
export const DEFAULT_MAX_PODS = 110;
/** No default pid threshold exists in the kubelet; we call it pressure when 90% of pid_max is used. */
const PID_PRESSURE_FRACTION = 0.9;

export interface CollectNodeInfoOptions {
  nodeName: string;
  nodeIP: string;
  runtimeVersion: string;
  kubeletVersion: string;
  labels?: Record<string, string>;
  taints?: Taint[];
  runtimeReady: () => boolean;
  networkNotReady?: () => string | undefined;
  shuttingDown?: () => boolean;
  runtimeHandlers?: () => readonly NodeRuntimeHandler[];
  runtimeFeatures?: () => { supplementalGroupsPolicy: boolean } | undefined;
  /** The filesystem behind ephemeral-storage (the kubelet uses its root dir); default '/'. */
  rootDir?: string;
  /** Where the runtime keeps its images (CRI ImageFsInfo's mountpoint), once known: the imagefs signal. */
  imageFsDir?: () => string | undefined;
  maxPods?: number;
  /** `port` of the kubelet API. */
  kubeletPort?: number;
}

/** Node.js arch names → GOARCH, which is what `kubernetes.io/arch` and nodeInfo carry. */
export function goArch(arch: string = process.arch): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    arm64: 'arm64',
    arm: 'arm',
    ia32: '386',
    ppc64: 'ppc64le',
    s390x: 's390x',
    riscv64: 'riscv64',
    loong64: 'loong64',
    mips: 'mips',
    mipsel: 'mipsle',
  };
  return map[arch] ?? arch;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

export function osImage(osRelease = readText('/etc/os-release')): string {
  const m = /^PRETTY_NAME=(.*)$/m.exec(osRelease);
  if (!m) return 'Linux';
  return m[1].trim().replace(/^(["'])(.*)\1$/, '$2');
}

/** Bytes as a Kubernetes quantity in Ki, as cAdvisor-derived capacities are shown. */
export function kibi(bytes: number): string {
  return `${Math.floor(bytes / 1024)}Ki`;
}

function memAvailableBytes(meminfo = readText('/proc/meminfo')): number | undefined {
  const m = /^MemAvailable:\s+(\d+)\s*kB/m.exec(meminfo);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** Processes (threads) in use vs the kernel's limit, from /proc/loadavg ("r/total") and pid_max. */
function pidUsage(): { used: number; max: number } | undefined {
  const total = /\s\d+\/(\d+)\s/.exec(readText('/proc/loadavg'))?.[1];
  const max = Number(readText('/proc/sys/kernel/pid_max'));
  if (!total || !max) return undefined;
  return { used: Number(total), max };
}

/** A CPU quantity as the API server writes it: whole cores bare, anything finer in millicores. */
function milliCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

export function collectNodeInfo(opts: CollectNodeInfoOptions): NodeInfoSource {
  const rootDir = opts.rootDir ?? '/';
  const maxPods = String(opts.maxPods ?? DEFAULT_MAX_PODS);
  const capacity = (): ResourceList => ({
    cpu: String(nodeCpuCount()),
    memory: kibi(totalmem()),
    pods: maxPods,
    'ephemeral-storage': kibi(fileSystemOf(rootDir).total),
  });
  return {
    nodeName: opts.nodeName,
    nodeIP: opts.nodeIP,
    runtimeVersion: opts.runtimeVersion,
    kubeletVersion: opts.kubeletVersion,
    labels: opts.labels ?? {},
    taints: opts.taints ?? [],
    kubeletPort: opts.kubeletPort,
    runtimeReady: opts.runtimeReady,
    networkNotReady: opts.networkNotReady,
    shuttingDown: opts.shuttingDown,
    runtimeHandlers: opts.runtimeHandlers,
    runtimeFeatures: opts.runtimeFeatures,
    osImage: osImage(),
    kernelVersion: release(),
    architecture: goArch(),
    operatingSystem: 'linux',
    machineID: readText('/etc/machine-id'),
    bootID: readText('/proc/sys/kernel/random/boot_id'),
    systemUUID: readText('/sys/class/dmi/id/product_uuid'),
    capacity,
    allocatable: () => {
      const node = nodeAllocatable(undefined, rootDir);
      return {
        cpu: milliCpu(node.cpuMillis),
        memory: kibi(node.memoryBytes),
        pods: maxPods,
        'ephemeral-storage': String(node.ephemeralStorageBytes),
      };
    },
    pressure: (): NodePressure => {
      const mem = memAvailableBytes();
      const fs = fileSystemOf(rootDir);
      const imageFsDir = opts.imageFsDir?.();
      const imageFs = imageFsDir === undefined ? undefined : fileSystemOf(imageFsDir);
      const pids = pidUsage();
      return {
        memory: mem !== undefined && mem < EVICTION_HARD_MEMORY_BYTES,
        // The kubelet's DiskPressure: nodefs.available or imagefs.available under its threshold.
        disk:
          (fs.total > 0 && fs.available / fs.total < EVICTION_HARD_NODEFS_FRACTION) ||
          (imageFs !== undefined &&
            imageFs.total > 0 &&
            imageFs.available / imageFs.total < EVICTION_HARD_IMAGEFS_FRACTION),
        pid: pids !== undefined && pids.used / pids.max > PID_PRESSURE_FRACTION,
      };
    },
  };
}
