// The Summary API (k8s.io/kubelet/pkg/apis/stats/v1alpha1), the parts bootlet fills: what
// metrics-server (summary or resource metrics), `kubectl top` and dashboards read.

/** Pressure stall information of one kind (KubeletPSI, 1.34+): the kernel's averages and total (µs). */
export interface PSIData {
  total: number;
  avg10: number;
  avg60: number;
  avg300: number;
}

export interface PSIStats {
  full: PSIData;
  some: PSIData;
}

export interface CPUStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
  psi?: PSIStats;
}

export interface IOStats {
  time: string;
  psi?: PSIStats;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
  psi?: PSIStats;
}

export interface FsStats {
  time: string;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface ContainerStats {
  name: string;
  startTime: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  rootfs?: FsStats;
}

export interface PodStats {
  podRef: { name: string; namespace: string; uid: string };
  startTime: string;
  containers: ContainerStats[];
  cpu?: CPUStats;
  memory?: MemoryStats;
  io?: IOStats;
  'ephemeral-storage'?: FsStats;
}

export interface NodeStats {
  nodeName: string;
  startTime: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
  io?: IOStats;
  fs?: FsStats;
  /** The runtime's filesystems (CRI ImageFsInfo); containerFs is imageFs unless the runtime splits them. */
  runtime?: { imageFs?: FsStats; containerFs?: FsStats };
  rlimit?: { time: string; maxpid?: number; curproc?: number };
}

export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}
