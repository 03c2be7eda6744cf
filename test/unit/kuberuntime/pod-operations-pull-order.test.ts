// A container's start asks ImageStatus beside the pod cgroup check, but pulls only once the pod
// cgroup is there: the kubelet makes the pod cgroup before it pulls, so a pod whose cgroup fails
// pulls nothing.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { PodCgroups } from '../../../src/cm/container-manager.js';
import type { ImageService, RuntimeService } from '../../../src/cri/cri-types.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { container, pod } from './fixtures.js';

function setup(c = container()) {
  const dir = useTmpDir('pod-ops-pull-order');
  const calls: string[] = [];
  const cgroup = { resolve: (): void => undefined, reject: (_e: Error): void => undefined };
  const cgroupMade = new Promise<void>((resolve, reject) => Object.assign(cgroup, { resolve, reject }));
  const cgroups: PodCgroups = {
    podCgroupParent: () => '/kubepods/pod1',
    ensurePodCgroup: async () => {
      calls.push('ensurePodCgroup');
      await cgroupMade;
      calls.push('pod cgroup made');
    },
    checkSandboxPlacement: async () => undefined,
    explainRuntimeError: () => undefined,
    removePodCgroup: async () => undefined,
    resizePodCgroup: async () => undefined,
  };
  const runtime = {
    createContainer: async () => {
      calls.push('CreateContainer');
      return 'container1';
    },
    startContainer: async () => {
      calls.push('StartContainer');
    },
  } as unknown as RuntimeService;
  const images = {
    // Not present: IfNotPresent pulls it.
    imageStatus: async () => {
      calls.push('ImageStatus');
      return undefined;
    },
    pullImage: async () => {
      calls.push('PullImage');
      return 'sha256:1';
    },
  } as unknown as ImageService;
  const logger = createLogger({ format: 'json', verbosity: 0, sink: { write: () => undefined } });
  const ops = new CriPodRuntime({
    runtime,
    images,
    rootDir: `${dir}/root`,
    podLogsDir: `${dir}/pods`,
    nodeName: 'node1',
    nodeIP: '10.0.0.1',
    resolvConf: '',
    logger,
    cgroups,
  });
  const p = pod({ spec: { containers: [c] } });
  const start = () =>
    ops.startContainer(p, { id: 'sandbox1', attempt: 0, ip: '10.1.0.5' }, p.spec!.containers[0]!, 'container', 0);
  const imageStatusAsked = () =>
    waitFor(() => calls.includes('ImageStatus'), {
      timeoutMs: 10_000,
      intervalMs: 5,
      what: 'ImageStatus while the pod cgroup is being made',
    });
  return { calls, cgroup, start, imageStatusAsked };
}

describe('CriPodRuntime.startContainer: the image and the pod cgroup', () => {
  it('a pod whose cgroup fails asks ImageStatus beside it but pulls nothing', async () => {
    const t = setup();
    const started = t.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    await t.imageStatusAsked();
    t.cgroup.reject(new Error('mkdir /sys/fs/cgroup/kubepods/pod1: read-only file system'));
    const err = await started;
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('mkdir /sys/fs/cgroup/kubepods/pod1: read-only file system');
    expect(t.calls).toEqual(['ensurePodCgroup', 'ImageStatus']);
  });

  it('a missing image is pulled once the pod cgroup is made, then the container is created', async () => {
    const t = setup();
    const started = t.start();
    await t.imageStatusAsked();
    expect(t.calls).toEqual(['ensurePodCgroup', 'ImageStatus']);
    t.cgroup.resolve();
    await started;
    expect(t.calls).toEqual([
      'ensurePodCgroup',
      'ImageStatus',
      'pod cgroup made',
      'PullImage',
      'CreateContainer',
      'StartContainer',
    ]);
  });

  it('with imagePullPolicy Always (no ImageStatus) a failed pod cgroup pulls nothing either', async () => {
    const t = setup(container({ imagePullPolicy: 'Always' }));
    const started = t.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    t.cgroup.reject(new Error('no space left on device'));
    expect(((await started) as Error).message).toBe('no space left on device');
    expect(t.calls).toEqual(['ensurePodCgroup']);
  });
});
