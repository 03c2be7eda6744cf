import type { Container, Pod } from 'kubernetes-types/core/v1';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ContainerManager } from '../../../src/cm/container-manager.js';
import { createLogger } from '../../../src/log/logger.js';
import { FakeCgroupManager } from './fake-cgroup-manager.js';

const UID = '5f0c-11ee-be56';

function pod(uid: string, resources: Container['resources'] = {}): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: 'kube-system', uid },
    spec: { containers: [{ name: 'c', image: 'x', resources }] },
  };
}
const burstable = (uid: string, cpu: string) => pod(uid, { requests: { cpu } });
const guaranteed = (uid: string) =>
  pod(uid, { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } });

function setup(driver: 'cgroupfs' | 'systemd' = 'cgroupfs', cgroupRoot = '/', desired: Pod[] = []) {
  const lines: string[] = [];
  const logger = createLogger({ format: 'json', verbosity: 4, sink: { write: (l) => lines.push(l) } });
  const manager = new FakeCgroupManager(driver);
  const cm = new ContainerManager({
    manager,
    cgroupRoot,
    enforceCpuLimits: true,
    podPidsLimit: -1,
    nodeCpuMilli: 2000,
    logger,
    desiredPods: () => desired,
  });
  const errors = () =>
    lines.map((l) => JSON.parse(l) as { msg: string; err?: string }).filter((r) => r.err !== undefined);
  return { cm, manager, lines, errors };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ContainerManager', () => {
  it('start makes kubepods with the node cpu as shares, BestEffort at 2 shares, and Burstable', async () => {
    const { cm, manager } = setup();
    await cm.start();
    cm.stop();
    expect(manager.cgroups.get('/kubepods')).toEqual({ cpuShares: 2048 });
    // With the node's capacity given, kubepods is also limited to it (enforceNodeAllocatable: pods).
    const limited = new ContainerManager({
      manager,
      cgroupRoot: '/',
      enforceCpuLimits: true,
      podPidsLimit: -1,
      nodeCpuMilli: 2000,
      nodeMemoryBytes: 8 * 2 ** 30,
      nodePids: 4194304,
      logger: createLogger({ format: 'json', verbosity: 0, sink: { write: () => {} } }),
    });
    await limited.start();
    limited.stop();
    expect(manager.cgroups.get('/kubepods')).toEqual({ cpuShares: 2048, memoryLimit: 8 * 2 ** 30, pidsLimit: 4194304 });
    expect(manager.cgroups.get('/kubepods/besteffort')).toEqual({ cpuShares: 2 });
    expect(manager.cgroups.get('/kubepods/burstable')).toEqual({ cpuShares: 2 });
  });

  it("gives each QoS class's pods their parent, in the driver's form", () => {
    const fs = setup('cgroupfs').cm;
    expect(fs.podCgroupParent(guaranteed(UID))).toBe(`/kubepods/pod${UID}`);
    expect(fs.podCgroupParent(burstable(UID, '100m'))).toBe(`/kubepods/burstable/pod${UID}`);
    expect(fs.podCgroupParent(pod(UID))).toBe(`/kubepods/besteffort/pod${UID}`);
    const sd = setup('systemd').cm;
    expect(sd.podCgroupParent(guaranteed(UID))).toBe('/kubepods.slice/kubepods-pod5f0c_11ee_be56.slice');
    expect(sd.podCgroupParent(burstable(UID, '100m'))).toBe(
      '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5f0c_11ee_be56.slice',
    );
    expect(sd.podCgroupParent(pod(UID))).toBe(
      '/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod5f0c_11ee_be56.slice',
    );
    expect(setup('cgroupfs', '/agent').cm.podCgroupParent(pod(UID))).toBe(`/agent/kubepods/besteffort/pod${UID}`);
  });

  it('a new pod cgroup gets its limits, after the Burstable shares count its request', async () => {
    const desired: Pod[] = [];
    const { cm, manager } = setup('cgroupfs', '/', desired);
    await cm.start();
    desired.push(burstable('a', '300m'));
    await cm.ensurePodCgroup(burstable('b', '200m'));
    cm.stop();
    expect(manager.cgroups.get('/kubepods/burstable')?.cpuShares).toBe(512);
    expect(manager.cgroups.get('/kubepods/burstable/podb')).toEqual({ cpuShares: 204 });
    const order = manager.calls.filter((c) => c.includes('podb') || c.startsWith('update /kubepods/burstable '));
    expect(order.at(-1)).toMatch(/^ensure \/kubepods\/burstable\/podb/);
  });

  it('a pod start writes only the QoS shares it changes; the periodic update writes both', async () => {
    vi.useFakeTimers();
    const { cm, manager } = setup();
    await cm.start();
    manager.calls.length = 0;
    await cm.ensurePodCgroup(pod('be1'));
    await cm.ensurePodCgroup(pod('be2'));
    expect(manager.calls.filter((c) => c.startsWith('update '))).toEqual([]);
    await cm.ensurePodCgroup(burstable('bu', '500m'));
    expect(manager.calls.filter((c) => c.startsWith('update '))).toEqual([
      'update /kubepods/burstable {"cpuShares":512}',
    ]);
    manager.calls.length = 0;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(manager.calls.filter((c) => c.startsWith('update ')).sort()).toEqual([
      'update /kubepods/besteffort {"cpuShares":2}',
      'update /kubepods/burstable {"cpuShares":512}',
    ]);
    cm.stop();
  });

  it('a QoS write that failed on a pod start is made by the next pod start', async () => {
    const { cm, manager } = setup();
    await cm.start();
    const update = manager.update.bind(manager);
    let failures = 1;
    manager.update = async (n, r) => {
      if (failures-- > 0) throw new Error('EIO');
      return update(n, r);
    };
    await cm.ensurePodCgroup(burstable('a', '500m'));
    expect(manager.cgroups.get('/kubepods/burstable')?.cpuShares).toBe(2);
    await cm.ensurePodCgroup(burstable('b', '0'));
    cm.stop();
    expect(manager.cgroups.get('/kubepods/burstable')?.cpuShares).toBe(512);
  });

  it('an existing pod cgroup is left as it is (a restarted agent keeps it)', async () => {
    const { cm, manager } = setup();
    manager.cgroups.set('/kubepods/podg', { cpuShares: 1024, memoryLimit: 1 });
    await cm.ensurePodCgroup(guaranteed('g'));
    expect(manager.calls.filter((c) => c.includes('podg'))).toEqual([]);
    expect(manager.cgroups.get('/kubepods/podg')).toEqual({ cpuShares: 1024, memoryLimit: 1 });
  });

  it('refuses a UID that is not a cgroup name', async () => {
    const { cm } = setup();
    await expect(cm.ensurePodCgroup(pod('../x'))).rejects.toThrow(/invalid cgroup name/);
    await expect(cm.removePodCgroup('../x')).resolves.toBeUndefined();
  });

  it('a busy pod cgroup is removed later, without the caller waiting or failing', async () => {
    vi.useFakeTimers();
    const { cm, manager } = setup();
    manager.cgroups.set(`/kubepods/burstable/pod${UID}`, {});
    manager.busy.set(`/kubepods/burstable/pod${UID}`, 2);
    await cm.removePodCgroup(UID);
    expect(manager.cgroups.has(`/kubepods/burstable/pod${UID}`)).toBe(true);
    await vi.advanceTimersByTimeAsync(1000);
    expect(manager.cgroups.has(`/kubepods/burstable/pod${UID}`)).toBe(true);
    await vi.advanceTimersByTimeAsync(2000);
    expect(manager.cgroups.has(`/kubepods/burstable/pod${UID}`)).toBe(false);
    cm.stop();
  });

  it('a removal that throws is retried, and never reaches the caller', async () => {
    vi.useFakeTimers();
    const { cm, manager } = setup();
    let failures = 1;
    const destroy = manager.destroy.bind(manager);
    manager.destroy = async (n) => {
      if (failures-- > 0) throw new Error('EACCES');
      return destroy(n);
    };
    manager.cgroups.set(`/kubepods/besteffort/pod${UID}`, {});
    await expect(cm.removePodCgroup(UID)).resolves.toBeUndefined();
    await vi.advanceTimersByTimeAsync(1000);
    expect(manager.cgroups.has(`/kubepods/besteffort/pod${UID}`)).toBe(false);
    cm.stop();
  });

  it('a pod that starts again cancels its pending removal', async () => {
    vi.useFakeTimers();
    const { cm, manager } = setup();
    const p = burstable(UID, '100m');
    await cm.ensurePodCgroup(p);
    manager.busy.set(`/kubepods/burstable/pod${UID}`, 1);
    await cm.removePodCgroup(UID);
    await cm.ensurePodCgroup(p);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(manager.cgroups.has(`/kubepods/burstable/pod${UID}`)).toBe(true);
    cm.stop();
  });

  it("recognises runc's error for a cgroupfs parent under the systemd driver: one line, naming the setting", () => {
    const { cm, errors } = setup('cgroupfs');
    const runc =
      'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups, got "/kubepods/burstable/pod1/abc" instead: unknown';
    const first = cm.explainRuntimeError(runc);
    const second = cm.explainRuntimeError(runc);
    expect(first).toBe(second);
    expect(first).toMatch(/set cgroupDriver: systemd \(--cgroup-driver=systemd\)/);
    expect(errors()).toHaveLength(1);
    expect(errors()[0]!.msg).toMatch(
      /runtime uses the systemd driver and bootlet uses cgroupfs; set cgroupDriver: systemd in the KubeletConfiguration/,
    );
    expect(cm.explainRuntimeError('image not found')).toBeUndefined();
  });

  it("recognises CRI-O's refusal of a systemd slice under its cgroupfs manager", () => {
    const { cm } = setup('systemd');
    expect(
      cm.explainRuntimeError(
        'cri-o configured with cgroupfs cgroup manager, but received systemd slice as parent: /kubepods.slice/x.slice',
      ),
    ).toMatch(/set cgroupDriver: cgroupfs/);
    expect(
      cm.explainRuntimeError('configured with systemd cgroup manager, but did not receive slice as parent'),
    ).toBeUndefined();
  });

  it('a sandbox that did not land in its pod cgroup is the other driver at work: one line', async () => {
    const { cm, errors } = setup('systemd');
    await cm.checkSandboxPlacement(burstable(UID, '1'));
    await cm.checkSandboxPlacement(burstable('other', '1'));
    expect(errors()).toHaveLength(1);
    expect(errors()[0]!.msg).toMatch(
      /runtime uses the cgroupfs driver and bootlet uses systemd; set cgroupDriver: cgroupfs/,
    );
    const ok = setup('cgroupfs');
    ok.manager.childrenOf.set(`/kubepods/burstable/pod${UID}`, ['abc']);
    await ok.cm.checkSandboxPlacement(burstable(UID, '1'));
    expect(ok.errors()).toHaveLength(0);
  });

  it('a mismatch known from the runtime config is logged once, and not again at the first failure', () => {
    const { cm, errors } = setup('cgroupfs');
    cm.reportRuntimeDriver('systemd');
    cm.explainRuntimeError(
      'expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups, got "x" instead',
    );
    expect(errors()).toHaveLength(1);
    cm.reportRuntimeDriver('cgroupfs');
    expect(errors()).toHaveLength(1);
  });
});
