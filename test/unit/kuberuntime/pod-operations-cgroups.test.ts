// The exact sandbox and container requests for the pod cgroups, against a CRI fake that records
// them (the systemd driver's form is also run for real in test/e2e/cm/systemd-driver.test.ts).
import { describe, expect, it } from 'vitest';
import { ContainerManager } from '../../../src/cm/container-manager.js';
import { createLogger } from '../../../src/log/logger.js';
import {
  CriError,
  type ContainerConfig,
  type ImageService,
  type PodSandboxConfig,
  type RuntimeService,
} from '../../../src/cri/cri-types.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { useTmpDir } from '../../support/tmp.js';
import { FakeCgroupManager } from '../cm/fake-cgroup-manager.js';
import { container, pod } from './fixtures.js';

const UID = '7d6c1e2a-5b3f-4c1d-9e8f-0a1b2c3d4e5f';
const SLICE =
  '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7d6c1e2a_5b3f_4c1d_9e8f_0a1b2c3d4e5f.slice';

function setup(driver: 'cgroupfs' | 'systemd', runSandbox?: () => Promise<string>) {
  const dir = useTmpDir('pod-ops-cgroups');
  const calls: string[] = [];
  const sandboxes: PodSandboxConfig[] = [];
  const created: { config: ContainerConfig; sandboxConfig: PodSandboxConfig }[] = [];
  const manager = new FakeCgroupManager(driver);
  const runtime = {
    runPodSandbox: async (config: PodSandboxConfig) => {
      calls.push('RunPodSandbox');
      sandboxes.push(config);
      return runSandbox ? runSandbox() : 'sandbox1';
    },
    podSandboxStatus: async () => ({ network: { ip: '10.1.0.5', additionalIps: [] } }),
    createContainer: async (_id: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig) => {
      calls.push('CreateContainer');
      created.push({ config, sandboxConfig });
      return 'container1';
    },
    startContainer: async () => {
      calls.push('StartContainer');
    },
  } as unknown as RuntimeService;
  const images = {
    imageStatus: async () => ({ id: 'sha256:1', repoTags: [], repoDigests: [], size: 1, username: '' }),
  } as unknown as ImageService;
  const lines: string[] = [];
  const logger = createLogger({ format: 'json', verbosity: 0, sink: { write: (l) => lines.push(l) } });
  const cm = new ContainerManager({
    manager,
    cgroupRoot: '/',
    enforceCpuLimits: true,
    podPidsLimit: -1,
    nodeCpuMilli: 1000,
    logger,
  });
  const ops = () =>
    new CriPodRuntime({
      runtime,
      images,
      rootDir: `${dir}/root`,
      podLogsDir: `${dir}/pods`,
      nodeName: 'node1',
      nodeIP: '10.0.0.1',
      resolvConf: '',
      logger,
      cgroups: cm,
    });
  const original = manager.ensure.bind(manager);
  manager.ensure = async (n, r) => {
    calls.push(`ensure ${manager.name(n)}`);
    return original(n, r);
  };
  return { ops, calls, sandboxes, created, manager, lines };
}

const burstable = () => {
  const p = pod({
    spec: { containers: [container({ resources: { requests: { cpu: '250m' }, limits: { memory: '64Mi' } } })] },
  });
  p.metadata.uid = UID;
  return p;
};

describe('CriPodRuntime with pod cgroups', () => {
  it('systemd: the pod slice is made first, then RunPodSandbox and CreateContainer carry it as the parent', async () => {
    const t = setup('systemd');
    const runtime = t.ops();
    const sandbox = await runtime.createSandbox(burstable(), 0);
    await runtime.startContainer(burstable(), sandbox, burstable().spec!.containers[0]!, 'container', 0);
    expect(t.calls).toEqual([`ensure ${SLICE}`, 'RunPodSandbox', 'CreateContainer', 'StartContainer']);
    expect(t.sandboxes[0]!.linux?.cgroupParent).toBe(SLICE);
    expect(t.created[0]!.sandboxConfig.linux?.cgroupParent).toBe(SLICE);
    expect(t.manager.cgroups.get(SLICE)).toEqual({ cpuShares: 256, memoryLimit: 64 * 2 ** 20 });
  });

  const CGROUPFS_PARENT = `/kubepods/burstable/pod${UID}`;
  it('cgroupfs: the pod cgroup is made beside RunPodSandbox, with its limits before CreateContainer; both carry it as the parent', async () => {
    const t = setup('cgroupfs');
    const runtime = t.ops();
    const sandbox = await runtime.createSandbox(burstable(), 0, burstable().spec!.containers);
    await runtime.startContainer(burstable(), sandbox, burstable().spec!.containers[0]!, 'container', 0);
    // RunPodSandbox goes out first; the pod cgroup is not looked at again for the first start.
    expect(t.calls).toEqual(['RunPodSandbox', `ensure ${CGROUPFS_PARENT}`, 'CreateContainer', 'StartContainer']);
    expect(t.sandboxes[0]!.linux?.cgroupParent).toBe(CGROUPFS_PARENT);
    expect(t.created[0]!.sandboxConfig.linux?.cgroupParent).toBe(CGROUPFS_PARENT);
    expect(t.manager.cgroups.get(CGROUPFS_PARENT)).toEqual({ cpuShares: 256, memoryLimit: 64 * 2 ** 20 });
  });

  it('cgroupfs: a pod cgroup the runtime made first (it makes a missing parent) still gets the limits', async () => {
    const t = setup('cgroupfs', async () => {
      // runc put the pause process in a pod cgroup it made itself, without limits.
      t.manager.cgroups.set(CGROUPFS_PARENT, {});
      return 'sandbox1';
    });
    const runtime = t.ops();
    const sandbox = await runtime.createSandbox(burstable(), 0);
    expect(t.manager.cgroups.get(CGROUPFS_PARENT)).toEqual({ cpuShares: 256, memoryLimit: 64 * 2 ** 20 });
    // A later sync's start (no sandbox made in it) looks again, and finds it.
    await runtime.startContainer(
      burstable(),
      { id: sandbox.id, attempt: 0, ip: '' },
      burstable().spec!.containers[0]!,
      'container',
      0,
    );
    expect(t.calls.filter((c) => c.startsWith('ensure'))).toHaveLength(1);
  });

  it('cgroupfs: a pod cgroup that cannot be made fails the sandbox step, after the sandbox call settled', async () => {
    const t = setup('cgroupfs');
    t.manager.ensure = async () => {
      throw new Error('mkdir /sys/fs/cgroup/cpu/kubepods: permission denied');
    };
    const err = await t
      .ops()
      .createSandbox(burstable(), 0)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(String(err)).toMatch(/permission denied/);
    expect(t.calls).toEqual(['RunPodSandbox']);
  });

  it("a runc driver-mismatch error becomes one clear line, and a short reason for the pod's status", async () => {
    const runc =
      'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups, got "/kubepods/burstable/pod1/abc" instead: unknown';
    const t = setup('cgroupfs', () => Promise.reject(new CriError('RunPodSandbox', 2, runc)));
    const runtime = t.ops();
    for (let i = 0; i < 3; i++) {
      const err = await runtime.createSandbox(burstable(), 0).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CriError);
      expect((err as CriError).details).toBe(
        'cgroup driver mismatch: the runtime uses systemd, bootlet cgroupfs; set cgroupDriver: systemd (--cgroup-driver=systemd)',
      );
    }
    const errors = t.lines.filter((l) => l.includes('cgroup driver mismatch'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/set cgroupDriver: systemd in the KubeletConfiguration \(or --cgroup-driver=systemd\)/);
  });
});
