import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ContainerStats, RuntimeService } from '../../../../src/cri/cri-types.js';
import { parsePressure, readCgroupV2Usage } from '../../../../src/server/stats/cgroup-v2-stats.js';
import { StatsProvider } from '../../../../src/server/stats/stats-provider.js';
import { runningEntry } from '../fake-source.js';

// The kernel's own formats (Documentation/accounting/psi.rst, cgroup-v2.rst).
const CPU_PRESSURE =
  'some avg10=1.25 avg60=0.50 avg300=0.10 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n';
const OLD_CPU_PRESSURE = 'some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n';
const MEMORY_STAT =
  'anon 4096000\nfile 8192000\ninactive_file 2000000\nactive_file 6192000\npgfault 777\npgmajfault 3\n';

const dirs: string[] = [];
function cgroup(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg2-'));
  dirs.push(dir);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('cgroup v2 usage and pressure', () => {
  it("parses a pressure file as the kubelet's PSIStats, total in the kernel's microseconds", () => {
    expect(parsePressure(CPU_PRESSURE)).toEqual({
      some: { avg10: 1.25, avg60: 0.5, avg300: 0.1, total: 123456 },
      full: { avg10: 0, avg60: 0, avg300: 0, total: 0 },
    });
    // cpu.pressure had no "full" line before Linux 5.13: zeros, as cAdvisor leaves them.
    expect(parsePressure(OLD_CPU_PRESSURE)?.full).toEqual({ avg10: 0, avg60: 0, avg300: 0, total: 0 });
    expect(parsePressure('')).toBeUndefined();
    expect(parsePressure(undefined)).toBeUndefined();
  });

  it('reads cpu.stat, memory.current less inactive_file, anon and page faults, and the three pressures', async () => {
    const dir = cgroup({
      'cpu.stat': 'usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n',
      'memory.current': '10240000\n',
      'memory.stat': MEMORY_STAT,
      'cpu.pressure': CPU_PRESSURE,
      'memory.pressure': CPU_PRESSURE,
      'io.pressure': CPU_PRESSURE,
    });
    const u = await readCgroupV2Usage(dir);
    expect(u.cpuCoreNanoSeconds).toBe(2_500_000_000);
    expect(u.memory).toEqual({
      usageBytes: 10_240_000,
      workingSetBytes: 8_240_000,
      rssBytes: 4_096_000,
      pageFaults: 777,
      majorPageFaults: 3,
    });
    expect(Object.keys(u.psi).sort()).toEqual(['cpu', 'io', 'memory']);
  });

  it('leaves out what a cgroup does not have (no PSI: psi=0 on the kernel command line)', async () => {
    const u = await readCgroupV2Usage(cgroup({ 'cpu.stat': 'usage_usec 1\n' }));
    expect(u.memory).toBeUndefined();
    expect(u.psi).toEqual({});
  });
});

describe('the Summary API on cgroup v2', () => {
  const runtime = { listContainerStats: async (): Promise<ContainerStats[]> => [] } as unknown as RuntimeService;

  it("takes a pod's figures and pressure from its own cgroup, and the node's pressure from the root", async () => {
    const entry = runningEntry();
    const root = cgroup({
      'cpu.pressure': CPU_PRESSURE,
      'memory.pressure': CPU_PRESSURE,
      'io.pressure': CPU_PRESSURE,
      'kubepods.slice/pod.slice/cpu.stat': 'usage_usec 7000\n',
      'kubepods.slice/pod.slice/memory.current': '5000000\n',
      'kubepods.slice/pod.slice/memory.stat': MEMORY_STAT,
      'kubepods.slice/pod.slice/cpu.pressure': CPU_PRESSURE,
      'kubepods.slice/pod.slice/memory.pressure': CPU_PRESSURE,
      'kubepods.slice/pod.slice/io.pressure': CPU_PRESSURE,
    });
    // The runtime reports the pod's running container, so the pod is in the summary.
    const id = entry.status.containerStatuses!.find((c) => c.state?.running)!.containerID!.replace(/^\w+:\/\//, '');
    const stats = new StatsProvider({
      runtime: {
        listContainerStats: async () => [
          { attributes: { id, labels: { 'io.kubernetes.pod.uid': entry.uid } }, cpu: null, memory: null },
        ],
      } as unknown as RuntimeService,
      nodeName: 'node1',
      rootDir: root,
      statuses: () => [entry],
      podCgroup: () => '/kubepods.slice/pod.slice',
      unifiedRoot: root,
    });
    const s = await stats.summary(true);
    expect(s.node.cpu?.psi?.some.total).toBe(123456);
    expect(s.node.memory?.psi?.some.avg10).toBe(1.25);
    expect(s.node.io?.psi?.full.total).toBe(0);
    const pod = s.pods[0]!;
    expect(pod.cpu?.usageCoreNanoSeconds).toBe(7_000_000);
    expect(pod.memory?.workingSetBytes).toBe(3_000_000);
    expect(pod.cpu?.psi?.some.avg60).toBe(0.5);
    expect(pod.io?.psi).toBeDefined();
  });

  it('reports no pressure on cgroup v1 (unifiedRoot unset), as the kubelet', async () => {
    const stats = new StatsProvider({ runtime, nodeName: 'n', rootDir: tmpdir(), statuses: () => [] });
    const s = await stats.summary(true);
    expect(s.node.cpu?.psi).toBeUndefined();
    expect(s.node.io).toBeUndefined();
  });
});
