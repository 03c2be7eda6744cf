// What the status says of a resize: a running container's resources as its cgroup holds them (in the
// allocation's words where they agree), its allocated requests, and the resize conditions.
import type { Container } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { sandbox } from './fixtures.js';
import type { DefaultedPod } from '../../../src/k8s/pod.js';
import type { AppliedResources, RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { addContainerResources, appliedResources, resizeConditions } from '../../../src/status/resize-status.js';

const MI = 1024 * 1024;
const main: Container = {
  name: 'main',
  image: 'img',
  resources: { requests: { cpu: '150m', memory: '32Mi' }, limits: { cpu: '300m', memory: '96Mi' } },
};
const pod: DefaultedPod = {
  metadata: { name: 'p', namespace: 'default', uid: 'u1', annotations: {}, generation: 3 },
  spec: { containers: [main] },
};
const applied = (cpuShares: number, cpuQuota: number, memory: number): AppliedResources => ({
  cpuShares,
  cpuQuota,
  cpuPeriod: 100000,
  memoryLimitInBytes: memory,
});

function runtime(resources: AppliedResources | undefined): RuntimePod {
  return {
    uid: 'u1',
    name: 'p',
    namespace: 'default',
    sandboxes: [sandbox('s1', { createdAt: 1 })],
    containers: [
      {
        id: 'c1',
        sandboxId: 's1',
        name: 'main',
        state: ContainerState.CONTAINER_RUNNING,
        createdAt: 1,
        startedAt: 1,
        finishedAt: 0,
        exitCode: 0,
        reason: '',
        message: '',
        imageRef: '',
        image: 'img',
        hasStatus: true,
        resources,
        meta: { podName: 'p', podNamespace: 'default', podUid: 'u1', containerName: 'main', hash: '', restartCount: 0 },
      },
    ],
  };
}

describe('resize status', () => {
  it("reports applied limits in the allocation's words where they agree, else the cgroup's value", () => {
    expect(appliedResources(main, applied(153, 30000, 96 * MI))).toEqual({
      requests: { cpu: '150m', memory: '32Mi' },
      limits: { cpu: '300m', memory: '96Mi' },
    });
    expect(appliedResources(main, applied(102, 20000, 64 * MI))).toEqual({
      requests: { cpu: '100m', memory: '32Mi' },
      limits: { cpu: '200m', memory: String(64 * MI) },
    });
  });

  it('sets allocatedResources and resources on a running container only where the runtime reports its limits', () => {
    const statuses = [{ name: 'main', image: 'img', imageID: '', ready: true, restartCount: 0 }];
    addContainerResources([main], statuses, runtime(undefined), false);
    expect(statuses[0]).not.toHaveProperty('resources');
    addContainerResources([main], statuses, runtime(applied(153, 30000, 96 * MI)), false);
    expect(statuses[0]).toMatchObject({
      allocatedResources: { cpu: '150m', memory: '32Mi' },
      resources: { limits: { cpu: '300m', memory: '96Mi' } },
    });
  });

  it('PodResizeInProgress while the containers run with less than their allocation, with the error of a failed attempt', () => {
    expect(resizeConditions(pod, runtime(applied(153, 30000, 96 * MI)), undefined)).toEqual([]);
    expect(resizeConditions(pod, runtime(applied(102, 20000, 64 * MI)), undefined)).toEqual([
      { type: 'PodResizeInProgress', status: 'True', observedGeneration: 3 },
    ]);
    expect(resizeConditions(pod, runtime(applied(102, 20000, 64 * MI)), { error: 'EBUSY' })).toEqual([
      { type: 'PodResizeInProgress', status: 'True', reason: 'Error', message: 'EBUSY', observedGeneration: 3 },
    ]);
  });

  it('PodResizePending with the reason and message of the decision, for the generation it was made for', () => {
    const pending = {
      reason: 'Deferred',
      message: "Node didn't have enough resource: cpu, requested: 5000, used: 1000, capacity: 4000",
      generation: 2,
    };
    expect(resizeConditions(pod, runtime(applied(153, 30000, 96 * MI)), { pending })).toEqual([
      { type: 'PodResizePending', status: 'True', reason: 'Deferred', message: pending.message, observedGeneration: 2 },
    ]);
  });
});
