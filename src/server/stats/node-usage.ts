// The node's own CPU and memory, read as cAdvisor reads the root cgroup: cgroup v1
// (cpuacct.usage, memory.usage_in_bytes and memory.stat) or v2 (cpu.stat, /proc/meminfo and
// memory.stat); working set = usage - inactive file pages. Filesystems by statfs.
import { readFile, statfs } from 'node:fs/promises';
import { totalmem, uptime } from 'node:os';
import type { MemoryUsage } from './cgroup-v2-stats.js';
import type { FsStats } from './summary-types.js';

export interface NodeUsage {
  /** ms since the epoch when read. */
  at: number;
  cpuCoreNanoSeconds?: number;
  memory?: MemoryUsage & { availableBytes: number };
}

const read = (p: string): Promise<string | undefined> => readFile(p, 'utf8').catch(() => undefined);

function statLine(text: string | undefined, key: string): number | undefined {
  if (!text) return undefined;
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

function meminfo(text: string | undefined, key: string): number | undefined {
  if (!text) return undefined;
  const m = new RegExp(`^${key.replace(/[()]/g, '\\$&')}:\\s+(\\d+) kB$`, 'm').exec(text);
  return m ? Number(m[1]) * 1024 : undefined;
}

async function cpuCoreNanoSeconds(): Promise<number | undefined> {
  for (const p of ['/sys/fs/cgroup/cpuacct/cpuacct.usage', '/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage']) {
    const v = await read(p);
    if (v !== undefined && /^\d+\s*$/.test(v)) return Number(v);
  }
  const usec = statLine(await read('/sys/fs/cgroup/cpu.stat'), 'usage_usec');
  if (usec !== undefined) return usec * 1000;
  const stat = await read('/proc/stat');
  const fields = stat?.split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number);
  if (!fields || fields.length < 8) return undefined;
  // user nice system idle iowait irq softirq steal: busy time, in USER_HZ (100 per second).
  const busy = fields[0]! + fields[1]! + fields[2]! + fields[5]! + fields[6]! + fields[7]!;
  return busy * 10_000_000;
}

async function memory(): Promise<NodeUsage['memory']> {
  const capacity = totalmem();
  const v1 = await read('/sys/fs/cgroup/memory/memory.usage_in_bytes');
  let usage: number | undefined;
  let stat: string | undefined;
  let inactive: number | undefined;
  let rss: number | undefined;
  let pgfault: number | undefined;
  let pgmajfault: number | undefined;
  if (v1 !== undefined && /^\d+\s*$/.test(v1)) {
    usage = Number(v1);
    stat = await read('/sys/fs/cgroup/memory/memory.stat');
    inactive = statLine(stat, 'total_inactive_file');
    rss = statLine(stat, 'total_rss');
    pgfault = statLine(stat, 'total_pgfault');
    pgmajfault = statLine(stat, 'total_pgmajfault');
  } else {
    const info = await read('/proc/meminfo');
    const total = meminfo(info, 'MemTotal');
    const free = meminfo(info, 'MemFree');
    if (total === undefined || free === undefined) return undefined;
    usage = total - free;
    stat = await read('/sys/fs/cgroup/memory.stat');
    inactive = statLine(stat, 'inactive_file') ?? meminfo(info, 'Inactive(file)');
    rss = statLine(stat, 'anon');
    pgfault = statLine(stat, 'pgfault');
    pgmajfault = statLine(stat, 'pgmajfault');
  }
  const workingSet = Math.max(0, usage - (inactive ?? 0));
  return {
    usageBytes: usage,
    workingSetBytes: workingSet,
    rssBytes: rss,
    pageFaults: pgfault,
    majorPageFaults: pgmajfault,
    availableBytes: Math.max(0, capacity - workingSet),
  };
}

export async function readNodeUsage(): Promise<NodeUsage> {
  const [cpu, mem] = await Promise.all([cpuCoreNanoSeconds(), memory()]);
  return { at: Date.now(), cpuCoreNanoSeconds: cpu, memory: mem };
}

export async function filesystemStats(path: string, time: string): Promise<FsStats | undefined> {
  try {
    const s = await statfs(path);
    return {
      time,
      availableBytes: s.bavail * s.bsize,
      capacityBytes: s.blocks * s.bsize,
      usedBytes: (s.blocks - s.bfree) * s.bsize,
      inodesFree: s.ffree,
      inodes: s.files,
      inodesUsed: s.files - s.ffree,
    };
  } catch {
    return undefined;
  }
}

/** The node's boot time, as the summary's node startTime. */
export function bootTime(now = Date.now()): Date {
  return new Date(Math.floor((now - uptime() * 1000) / 1000) * 1000);
}

export async function processLimits(): Promise<{ maxpid?: number; curproc?: number }> {
  const max = Number((await read('/proc/sys/kernel/pid_max'))?.trim());
  const threads = /\/(\d+)/.exec((await read('/proc/loadavg')) ?? '')?.[1];
  return { maxpid: Number.isFinite(max) ? max : undefined, curproc: threads ? Number(threads) : undefined };
}
