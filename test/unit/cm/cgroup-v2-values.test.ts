// The kubelet's cgroup v2 values for pod and QoS cgroups (pkg/kubelet/cm: getCPUWeight and the
// libcontainer fs2 writes it hands them to), checked against the kubelet's own test table and, for the
// cgroupfs driver, as files written into a unified tree.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cgroupName, ROOT_CGROUP } from '../../../src/cm/cgroup-name.js';
import { cpuSharesToWeight } from '../../../src/cm/cgroup-manager.js';
import { CgroupfsManager } from '../../../src/cm/cgroupfs-manager.js';
import { resourceConfigForPod } from '../../../src/cm/pod-resources.js';
import { milliCpuToShares } from '../../../src/cm/cpu-shares.js';

describe("cpu.weight from cpu.shares (the kubelet's getCPUWeight)", () => {
  it("matches the kubelet's TestGetCpuWeight table", () => {
    // pkg/kubelet/cm/cgroup_manager_linux_test.go: 2 → 1, 262144 → 10000, 1000000000 → 10000.
    expect(cpuSharesToWeight(2)).toBe(1);
    expect(cpuSharesToWeight(262144)).toBe(10000);
    expect(cpuSharesToWeight(1_000_000_000)).toBe(10000);
  });

  it('is linear in between, 1 + (shares - 2) × 9999 / 262142 rounded down (not runc 1.3’s quadratic one)', () => {
    expect(cpuSharesToWeight(1024)).toBe(39);
    // kubeadm's etcd (100m), kube-apiserver (250m), a 2-CPU node's kubepods (2000m).
    expect(cpuSharesToWeight(milliCpuToShares(100))).toBe(4);
    expect(cpuSharesToWeight(milliCpuToShares(250))).toBe(10);
    expect(cpuSharesToWeight(milliCpuToShares(2000))).toBe(79);
  });
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A unified tree as the kernel lays it out: the root offers controllers, none enabled yet. */
function unifiedTree(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'cg2-tree-'));
  dirs.push(root);
  writeFileSync(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n');
  writeFileSync(path.join(root, 'cgroup.subtree_control'), '\n');
  return root;
}

describe('the cgroupfs driver on cgroup v2', () => {
  it("writes a Guaranteed pod's cpu.weight, cpu.max, memory.max and pids.max as libcontainer's fs2 does", async () => {
    const root = unifiedTree();
    const m = new CgroupfsManager({ version: 2, mountpoint: root });
    const pod = {
      metadata: { name: 'g', uid: 'u1' },
      spec: {
        // As defaulted: requests copied from the limits.
        containers: [
          {
            name: 'c',
            resources: { limits: { cpu: '250m', memory: '64Mi' }, requests: { cpu: '250m', memory: '64Mi' } },
          },
        ],
      },
    };
    const name = cgroupName(ROOT_CGROUP, 'kubepods', 'podu1');
    // Directories the kernel would make: fill in the parent's files so the next level can read them.
    mkdirSync(path.join(root, 'kubepods'), { recursive: true });
    writeFileSync(path.join(root, 'kubepods', 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids\n');
    writeFileSync(path.join(root, 'kubepods', 'cgroup.subtree_control'), '\n');
    await m.ensure(name, resourceConfigForPod(pod, { enforceCpuLimits: true, podPidsLimit: 1024 }));
    const file = (f: string) => readFileSync(path.join(root, 'kubepods', 'podu1', f), 'utf8');
    expect(file('cpu.weight')).toBe('10');
    expect(file('cpu.max')).toBe('25000 100000');
    expect(file('memory.max')).toBe(String(64 * 1024 * 1024));
    expect(file('pids.max')).toBe('1024');
  });

  it("leaves a Burstable pod without limits at cpu.max max and memory.max untouched (the kubelet's 0: unset)", async () => {
    const root = unifiedTree();
    const m = new CgroupfsManager({ version: 2, mountpoint: root });
    for (const d of ['kubepods', 'kubepods/burstable']) {
      mkdirSync(path.join(root, d), { recursive: true });
      writeFileSync(path.join(root, d, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids\n');
      writeFileSync(path.join(root, d, 'cgroup.subtree_control'), '\n');
    }
    const pod = {
      metadata: { name: 'etcd', uid: 'u2' },
      spec: { containers: [{ name: 'etcd', resources: { requests: { cpu: '100m', memory: '100Mi' } } }] },
    };
    const config = resourceConfigForPod(pod, { enforceCpuLimits: true, podPidsLimit: -1 });
    expect(config.memoryLimit).toBeUndefined();
    await m.ensure(cgroupName(ROOT_CGROUP, 'kubepods', 'burstable', 'podu2'), config);
    const dir = path.join(root, 'kubepods', 'burstable', 'podu2');
    expect(readFileSync(path.join(dir, 'cpu.weight'), 'utf8')).toBe('4');
    expect(() => readFileSync(path.join(dir, 'cpu.max'), 'utf8')).toThrow();
    expect(() => readFileSync(path.join(dir, 'memory.max'), 'utf8')).toThrow();
  });
});
