// An in-place resize in a sync's plan (the kubelet's computePodResizeAction and doPodResizeAction):
// a running container whose applied limits differ from its allocation is updated in place, or
// restarted where its resizePolicy for a changed resource says RestartContainer; the steps come in
// the kubelet's order (memory, then cpu; the pod cgroup first when it grows, last when it shrinks).
import type { Container } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { ContainerState, type LinuxContainerResources } from '../../../src/cri/cri-types.js';
import { sandbox } from '../status/fixtures.js';
import type { AppliedResources, RuntimeContainer, RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { actionsOf, computePodActions, type ComputeInput } from '../../../src/podworkers/compute-actions.js';
import { CrashLoopBackOff, KUBELET_BACKOFF } from '../../../src/podworkers/crashloop-backoff.js';
import { resizeSteps, resourcesAtStep, type ContainerResize } from '../../../src/podworkers/resize-plan.js';

const MI = 1024 * 1024;
const applied = (cpuShares: number, cpuQuota: number, memoryLimitInBytes: number): AppliedResources => ({
  cpuShares,
  cpuQuota,
  cpuPeriod: 100000,
  memoryLimitInBytes,
});
const wanted = (cpuShares: number, cpuQuota: number, memoryLimitInBytes: number): LinuxContainerResources => ({
  ...applied(cpuShares, cpuQuota, memoryLimitInBytes),
  oomScoreAdj: 900,
});

function ctr(
  name: string,
  resources: AppliedResources | undefined,
  type: 'init' | 'container' = 'container',
): RuntimeContainer {
  return {
    id: `id-${name}`,
    sandboxId: 's1',
    name,
    state: ContainerState.CONTAINER_RUNNING,
    createdAt: 10,
    startedAt: 1,
    finishedAt: 0,
    exitCode: 0,
    reason: '',
    message: '',
    imageRef: 'sha256:x',
    image: 'img',
    hasStatus: true,
    resources,
    meta: {
      podName: 'p',
      podNamespace: 'default',
      podUid: 'u1',
      containerName: name,
      hash: `h-${name}`,
      restartCount: 2,
      type,
    },
  };
}

function plan(
  containers: Container[],
  running: RuntimeContainer[],
  want: Record<string, LinuxContainerResources>,
  initContainers: Container[] = [],
) {
  const runtime: RuntimePod = {
    uid: 'u1',
    name: 'p',
    namespace: 'default',
    sandboxes: [sandbox('s1', { createdAt: 1 })],
    containers: running,
  };
  const backoff = new CrashLoopBackOff();
  const input: ComputeInput = {
    uid: 'u1',
    restartPolicy: 'Always',
    initContainers,
    containers,
    specMatches: (inst) => inst.meta.hash === `h-${inst.name}`,
    wantedResources: (c) => want[c.name]!,
    runtime,
    nowMs: 1_000_000,
    admitRestart: (key, s, f) => backoff.admit(key, s, f, 1_000_000, KUBELET_BACKOFF),
  };
  return computePodActions(input);
}

describe('resize in a sync plan', () => {
  it('updates a running container in place where its policy allows (NotRequired, or none named)', () => {
    const p = plan([{ name: 'a', image: 'img' }], [ctr('a', applied(102, 20000, 64 * MI))], {
      a: wanted(153, 30000, 64 * MI),
    });
    expect(actionsOf(p, 'killContainer')).toEqual([]);
    expect(actionsOf(p, 'resizePod')).toEqual([
      {
        kind: 'resizePod',
        containers: [
          {
            id: 'id-a',
            name: 'a',
            wanted: wanted(153, 30000, 64 * MI),
            actual: applied(102, 20000, 64 * MI),
            changed: ['cpu'],
          },
        ],
      },
    ]);
  });

  it('restarts a container whose policy says RestartContainer for a changed resource, and only then', () => {
    const spec: Container = {
      name: 'a',
      image: 'img',
      resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
    };
    const memory = plan([spec], [ctr('a', applied(102, 20000, 64 * MI))], { a: wanted(102, 20000, 96 * MI) });
    expect(actionsOf(memory, 'resizePod')).toEqual([]);
    expect(actionsOf(memory, 'killContainer').map((k) => [k.id, k.why])).toEqual([
      ['id-a', 'Container a resize requires restart'],
    ]);
    expect(actionsOf(memory, 'startContainer').map((s) => [s.container.name, s.restartCount])).toEqual([['a', 3]]);
    const cpu = plan([spec], [ctr('a', applied(102, 20000, 64 * MI))], { a: wanted(204, 20000, 64 * MI) });
    expect(actionsOf(cpu, 'killContainer')).toEqual([]);
    expect(actionsOf(cpu, 'resizePod')[0]?.containers.map((r) => r.changed)).toEqual([['cpu']]);
  });

  it('resizes sidecars, never other init containers, and nothing whose runtime reports no limits', () => {
    const init: Container[] = [
      { name: 'side', image: 'img', restartPolicy: 'Always' },
      { name: 'once', image: 'img' },
    ];
    const p = plan(
      [{ name: 'a', image: 'img' }],
      [ctr('side', applied(2, 0, 0), 'init'), ctr('a', undefined)],
      { side: wanted(512, 0, 0), once: wanted(512, 0, 0), a: wanted(512, 0, 0) },
      init,
    );
    expect(actionsOf(p, 'resizePod')[0]?.containers.map((r) => r.name)).toEqual(['side']);
  });

  it('orders the steps as the kubelet: memory then cpu, the pod cgroup before its containers when it grows', () => {
    const r = (
      name: string,
      actual: AppliedResources,
      want: LinuxContainerResources,
      changed: ContainerResize['changed'],
    ): ContainerResize => ({
      id: name,
      name,
      actual,
      wanted: want,
      changed,
    });
    const grow = [r('a', applied(102, 20000, 64 * MI), wanted(153, 30000, 96 * MI), ['cpu', 'memory'])];
    expect(resizeSteps(grow)).toEqual([
      { kind: 'podCgroup', resource: 'memory' },
      { kind: 'containers', resource: 'memory' },
      { kind: 'podCgroup', resource: 'cpu' },
      { kind: 'containers', resource: 'cpu' },
    ]);
    const shrink = [r('a', applied(153, 30000, 96 * MI), wanted(102, 20000, 64 * MI), ['cpu', 'memory'])];
    expect(resizeSteps(shrink)).toEqual([
      { kind: 'containers', resource: 'memory' },
      { kind: 'podCgroup', resource: 'memory' },
      { kind: 'containers', resource: 'cpu' },
      { kind: 'podCgroup', resource: 'cpu' },
    ]);
    // Memory's step changes the memory limit only; cpu's sends everything.
    expect(resourcesAtStep(grow[0]!, 'memory')).toMatchObject({
      memoryLimitInBytes: 96 * MI,
      cpuShares: 102,
      cpuQuota: 20000,
    });
    expect(resourcesAtStep(grow[0]!, 'cpu')).toEqual(wanted(153, 30000, 96 * MI));
  });
});
