// /stats/summary from what the runtime reports (CRI ListContainerStats) for the static pods this
// agent runs, and the node's root cgroup. Pod figures are the sums of their running containers'.
// Everything is read when asked: no sampling loop runs when nobody asks. The node's usageNanoCores
// needs two readings, so the last one is kept (one small record).
import type { PodStatusEntry } from '../../status/status-manager.js';
import type {
  ContainerStats as CriContainerStats,
  FilesystemUsage,
  ImageService,
  RuntimeService,
} from '../../cri/cri-types.js';
import { POD_UID_LABEL } from '../../k8s/cri-labels.js';
import { runtimeId } from '../../k8s/container-id.js';
import { bootTime, filesystemStats, processLimits, readNodeUsage, type NodeUsage } from './node-usage.js';
import { readCgroupV2Usage, readPressure, type CgroupV2Usage } from './cgroup-v2-stats.js';
import type { ContainerStats, CPUStats, FsStats, MemoryStats, PodStats, PSIStats, Summary } from './summary-types.js';
import type { Pod } from 'kubernetes-types/core/v1';
import { apiTime } from '../../util/api-time.js';

export interface StatsProviderOptions {
  runtime: RuntimeService;
  /** ImageFsInfo: without it, or when it fails, node.runtime is left out. */
  images?: Pick<ImageService, 'imageFsInfo'>;
  nodeName: string;
  /** The kubelet root directory: its filesystem is the node's `fs`. */
  rootDir: string;
  statuses(): readonly PodStatusEntry[];
  /**
   * On the unified hierarchy: the pod's cgroup in cgroupfs form (`/kubepods.slice/...`), read for the
   * pod's own usage and pressure as cAdvisor reads it for the kubelet; undefined without pod cgroups.
   */
  podCgroup?: (pod: Pod) => string | undefined;
  /** Where the unified hierarchy is mounted; undefined on cgroup v1 (no PSI, pods summed from their containers). */
  unifiedRoot?: string;
}

/** Two readings of a cumulative CPU counter at least this far apart make a rate. */
const RATE_MIN_MS = 1000;

interface CpuSample {
  at: number;
  ns: number;
}

/** The rate of a cumulative nanosecond counter since the previous sample, in nanocores. */
function nanoCores(prev: CpuSample | undefined, now: CpuSample): number | undefined {
  if (!prev || now.at - prev.at < RATE_MIN_MS || now.ns < prev.ns) return undefined;
  return Math.round(((now.ns - prev.ns) / (now.at - prev.at)) * 1e6);
}

const iso = (ms: number): string => apiTime(new Date(ms));
const isoNs = (ns: number): string => (ns > 0 ? iso(Math.floor(ns / 1e6)) : iso(Date.now()));
const val = (v: { value: number } | null | undefined): number | undefined => (v ? v.value : undefined);

function cpuOf(s: CriContainerStats): CPUStats | undefined {
  if (!s.cpu) return undefined;
  return {
    time: isoNs(s.cpu.timestamp),
    usageNanoCores: val(s.cpu.usageNanoCores),
    usageCoreNanoSeconds: val(s.cpu.usageCoreNanoSeconds),
  };
}

function memoryOf(s: CriContainerStats): MemoryStats | undefined {
  const m = s.memory;
  if (!m) return undefined;
  return {
    time: isoNs(m.timestamp),
    availableBytes: val(m.availableBytes),
    usageBytes: val(m.usageBytes),
    workingSetBytes: val(m.workingSetBytes),
    rssBytes: val(m.rssBytes),
    pageFaults: val(m.pageFaults),
    majorPageFaults: val(m.majorPageFaults),
  };
}

function sum<T>(xs: readonly T[], pick: (x: T) => number | undefined): number | undefined {
  let total: number | undefined;
  for (const x of xs) {
    const v = pick(x);
    if (v !== undefined) total = (total ?? 0) + v;
  }
  return total;
}

export class StatsProvider {
  private lastNode: NodeUsage | undefined;
  /** The last reading of each pod cgroup's CPU counter kept for its rate (pods gone are dropped). */
  private readonly lastPod = new Map<string, CpuSample>();

  constructor(private readonly o: StatsProviderOptions) {}

  async summary(onlyCpuAndMemory = false): Promise<Summary> {
    const now = Date.now();
    const time = iso(now);
    const [usage, criStats] = await Promise.all([readNodeUsage(), this.o.runtime.listContainerStats()]);
    const pods = await this.podStats(criStats, onlyCpuAndMemory);
    const cpu: CPUStats | undefined =
      usage.cpuCoreNanoSeconds === undefined ? undefined : { time, usageCoreNanoSeconds: usage.cpuCoreNanoSeconds };
    const prev = this.lastNode;
    if (
      cpu &&
      prev?.cpuCoreNanoSeconds !== undefined &&
      usage.at - prev.at >= 1000 &&
      usage.cpuCoreNanoSeconds! >= prev.cpuCoreNanoSeconds
    ) {
      cpu.usageNanoCores = Math.round(
        ((usage.cpuCoreNanoSeconds! - prev.cpuCoreNanoSeconds) / (usage.at - prev.at)) * 1e6,
      );
    }
    if (!prev || usage.at - prev.at >= 1000) this.lastNode = usage;
    const psi = await this.nodePressure();
    if (cpu && psi.cpu) cpu.psi = psi.cpu;
    const summary: Summary = {
      node: {
        nodeName: this.o.nodeName,
        startTime: iso(bootTime(now).getTime()),
        cpu,
        memory: usage.memory ? { time, ...usage.memory, ...(psi.memory ? { psi: psi.memory } : {}) } : undefined,
        ...(psi.io ? { io: { time, psi: psi.io } } : {}),
      },
      pods,
    };
    if (!onlyCpuAndMemory) {
      summary.node.fs = await filesystemStats(this.o.rootDir, time);
      const runtimeFs = await this.runtimeFilesystems();
      if (runtimeFs) summary.node.runtime = runtimeFs;
      summary.node.rlimit = { time, ...(await processLimits()) };
    }
    return summary;
  }

  /**
   * The kubelet's CRI stats provider (ImageFsStats): the first image filesystem the runtime names,
   * its used bytes and inodes as the runtime counts them, capacity and free space from the
   * filesystem at its mountpoint; the container filesystem is the image one unless the runtime
   * names its own (KEP-4191).
   */
  private async runtimeFilesystems(): Promise<{ imageFs: FsStats; containerFs: FsStats } | undefined> {
    const info = await this.o.images?.imageFsInfo().catch(() => undefined);
    const image = info?.imageFilesystems[0];
    if (!image) return undefined;
    const imageFs = await runtimeFsStats(image);
    const container = info.containerFilesystems[0];
    return { imageFs, containerFs: container ? await runtimeFsStats(container) : imageFs };
  }

  /** The root cgroup's pressure (the system-wide figures: /proc/pressure when the root has no files). */
  private async nodePressure(): Promise<Partial<Record<'cpu' | 'memory' | 'io', PSIStats>>> {
    const root = this.o.unifiedRoot;
    if (root === undefined) return {};
    const out: Partial<Record<'cpu' | 'memory' | 'io', PSIStats>> = {};
    for (const r of ['cpu', 'memory', 'io'] as const) {
      const p = (await readPressure(root, r)) ?? (await readPressure('/proc/pressure', r).catch(() => undefined));
      if (p) out[r] = p;
    }
    return out;
  }

  /** The pod cgroup's own usage, on the unified hierarchy; undefined where it cannot be read. */
  private async podCgroupUsage(pod: Pod): Promise<CgroupV2Usage | undefined> {
    const root = this.o.unifiedRoot;
    const rel = root === undefined ? undefined : this.o.podCgroup?.(pod);
    if (root === undefined || rel === undefined) return undefined;
    const usage = await readCgroupV2Usage(`${root}${rel}`);
    return usage.cpuCoreNanoSeconds === undefined && usage.memory === undefined ? undefined : usage;
  }

  private async podStats(criStats: CriContainerStats[], cpuAndMemoryOnly: boolean): Promise<PodStats[]> {
    const byId = new Map(criStats.filter((s) => s.attributes?.id).map((s) => [s.attributes!.id, s]));
    const fsCache = new Map<string, FsStats | undefined>();
    const out: PodStats[] = [];
    const seen = new Set<string>();
    for (const e of this.o.statuses()) {
      const containers: ContainerStats[] = [];
      for (const st of e.status.containerStatuses ?? []) {
        const id = st.state?.running ? runtimeId(st.containerID) : undefined;
        const s = id ? byId.get(id) : undefined;
        if (!s || s.attributes?.labels[POD_UID_LABEL] !== e.uid) continue;
        const c: ContainerStats = {
          name: st.name,
          startTime: st.state?.running?.startedAt ?? iso(Date.now()),
          cpu: cpuOf(s),
          memory: memoryOf(s),
        };
        if (!cpuAndMemoryOnly && s.writableLayer) {
          const mount = s.writableLayer.fsId?.mountpoint ?? '';
          if (!fsCache.has(mount))
            fsCache.set(mount, mount ? await filesystemStats(mount, isoNs(s.writableLayer.timestamp)) : undefined);
          const fs = fsCache.get(mount);
          c.rootfs = {
            ...fs,
            time: isoNs(s.writableLayer.timestamp),
            usedBytes: val(s.writableLayer.usedBytes),
            inodesUsed: val(s.writableLayer.inodesUsed),
          };
        }
        containers.push(c);
      }
      if (containers.length === 0) continue;
      const time = containers.find((c) => c.cpu)?.cpu?.time ?? iso(Date.now());
      const pod: PodStats = {
        podRef: { name: e.pod.metadata?.name ?? '', namespace: e.pod.metadata?.namespace ?? '', uid: e.uid },
        startTime: e.status.startTime ?? time,
        containers,
        cpu: {
          time,
          usageNanoCores: sum(containers, (c) => c.cpu?.usageNanoCores),
          usageCoreNanoSeconds: sum(containers, (c) => c.cpu?.usageCoreNanoSeconds),
        },
        memory: {
          time,
          usageBytes: sum(containers, (c) => c.memory?.usageBytes),
          workingSetBytes: sum(containers, (c) => c.memory?.workingSetBytes),
          rssBytes: sum(containers, (c) => c.memory?.rssBytes),
          pageFaults: sum(containers, (c) => c.memory?.pageFaults),
          majorPageFaults: sum(containers, (c) => c.memory?.majorPageFaults),
        },
      };
      // On cgroup v2 the pod's own cgroup (its sandbox and overhead included), as the kubelet reports it.
      const own = await this.podCgroupUsage(e.pod);
      seen.add(e.uid);
      if (own) {
        const at = Date.now();
        const ownTime = iso(at);
        if (own.cpuCoreNanoSeconds !== undefined) {
          const sample = { at, ns: own.cpuCoreNanoSeconds };
          const prev = this.lastPod.get(e.uid);
          pod.cpu = {
            time: ownTime,
            usageNanoCores: nanoCores(prev, sample) ?? pod.cpu?.usageNanoCores,
            usageCoreNanoSeconds: own.cpuCoreNanoSeconds,
            ...(own.psi.cpu ? { psi: own.psi.cpu } : {}),
          };
          if (!prev || at - prev.at >= RATE_MIN_MS) this.lastPod.set(e.uid, sample);
        }
        if (own.memory)
          pod.memory = { time: ownTime, ...own.memory, ...(own.psi.memory ? { psi: own.psi.memory } : {}) };
        if (own.psi.io) pod.io = { time: ownTime, psi: own.psi.io };
      }
      const rootfs = containers.map((c) => c.rootfs).filter((f): f is FsStats => f !== undefined);
      if (rootfs.length > 0)
        pod['ephemeral-storage'] = {
          ...rootfs[0],
          time,
          usedBytes: sum(rootfs, (f) => f.usedBytes),
          inodesUsed: sum(rootfs, (f) => f.inodesUsed),
        };
      out.push(pod);
    }
    for (const uid of this.lastPod.keys()) if (!seen.has(uid)) this.lastPod.delete(uid);
    return out;
  }
}

async function runtimeFsStats(u: FilesystemUsage): Promise<FsStats> {
  const time = isoNs(u.timestamp);
  const mount = u.fsId?.mountpoint;
  const fs = mount ? await filesystemStats(mount, time) : undefined;
  return {
    time,
    ...(fs && {
      availableBytes: fs.availableBytes,
      capacityBytes: fs.capacityBytes,
      inodesFree: fs.inodesFree,
      inodes: fs.inodes,
    }),
    usedBytes: val(u.usedBytes),
    inodesUsed: val(u.inodesUsed),
  };
}
