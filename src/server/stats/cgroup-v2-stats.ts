// A cgroup's own usage on the unified (v2) hierarchy, read from its files as cAdvisor reads them
// for the kubelet: cpu.stat's usage_usec, memory.current less inactive_file (the working set),
// memory.stat's anon and page faults, and pressure stall information (cpu, memory and io.pressure)
// where the kernel has it (the kubelet's KubeletPSI fields of the Summary API).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { PSIData, PSIStats } from './summary-types.js';

export type PressureResource = 'cpu' | 'memory' | 'io';

/** Memory as read from a cgroup (or the node's /proc), before it becomes the Summary's MemoryStats. */
export interface MemoryUsage {
  usageBytes: number;
  workingSetBytes: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface CgroupV2Usage {
  cpuCoreNanoSeconds?: number;
  memory?: MemoryUsage;
  psi: Partial<Record<PressureResource, PSIStats>>;
}

const read = (p: string): Promise<string | undefined> => readFile(p, 'utf8').catch(() => undefined);

function keyed(text: string | undefined, key: string): number | undefined {
  if (!text) return undefined;
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

const ZERO: PSIData = { total: 0, avg10: 0, avg60: 0, avg300: 0 };

/**
 * A pressure file: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" and, except for the cpu of
 * kernels before 5.13, a "full" line. total stays in the kernel's microseconds, as the kubelet
 * passes it on. undefined when there is no "some" line (no PSI: psi=0, or not a pressure file).
 */
export function parsePressure(text: string | undefined): PSIStats | undefined {
  if (!text) return undefined;
  const line = (kind: 'some' | 'full'): PSIData | undefined => {
    const m = new RegExp(`^${kind} avg10=([\\d.]+) avg60=([\\d.]+) avg300=([\\d.]+) total=(\\d+)$`, 'm').exec(text);
    return m ? { avg10: Number(m[1]), avg60: Number(m[2]), avg300: Number(m[3]), total: Number(m[4]) } : undefined;
  };
  const some = line('some');
  if (!some) return undefined;
  return { full: line('full') ?? ZERO, some };
}

/** The pressure of one resource in `dir`, or (for the root) the system-wide /proc/pressure file. */
export async function readPressure(dir: string, resource: PressureResource): Promise<PSIStats | undefined> {
  return parsePressure((await read(path.join(dir, `${resource}.pressure`))) ?? undefined);
}

/**
 * Usage of the cgroup at `dir` (an absolute path under /sys/fs/cgroup). Fields the cgroup lacks
 * (a controller not enabled there, the root's memory.current) are left out.
 */
export async function readCgroupV2Usage(dir: string): Promise<CgroupV2Usage> {
  const [cpuStat, current, memStat, cpuP, memP, ioP] = await Promise.all([
    read(path.join(dir, 'cpu.stat')),
    read(path.join(dir, 'memory.current')),
    read(path.join(dir, 'memory.stat')),
    readPressure(dir, 'cpu'),
    readPressure(dir, 'memory'),
    readPressure(dir, 'io'),
  ]);
  const usec = keyed(cpuStat, 'usage_usec');
  const out: CgroupV2Usage = { psi: {} };
  if (usec !== undefined) out.cpuCoreNanoSeconds = usec * 1000;
  if (current !== undefined && /^\d+\s*$/.test(current)) {
    const usage = Number(current);
    const inactive = keyed(memStat, 'inactive_file') ?? 0;
    out.memory = {
      usageBytes: usage,
      workingSetBytes: Math.max(0, usage - inactive),
      rssBytes: keyed(memStat, 'anon'),
      pageFaults: keyed(memStat, 'pgfault'),
      majorPageFaults: keyed(memStat, 'pgmajfault'),
    };
  }
  if (cpuP) out.psi.cpu = cpuP;
  if (memP) out.psi.memory = memP;
  if (ioP) out.psi.io = ioP;
  return out;
}
