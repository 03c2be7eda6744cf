// PodReadyToStartContainers (on by default since 1.29, GA in 1.37) as the kubelet's
// GeneratePodReadyToStartContainersCondition sets it: True when no new sandbox is needed
// (PodSandboxChanged says no: the newest sandbox is ready, the only ready one, and has an IP unless
// the pod is on the host network), False otherwise, without a reason.
import { describe, expect, it } from 'vitest';
import { PodSandboxState } from '../../../src/cri/cri-types.js';
import { generatePodStatus } from '../../../src/status/generate-pod-status.js';
import type { RuntimeSandbox } from '../../../src/kuberuntime/runtime-pods.js';
import { ctr, input, runtimePod, sandbox, staticPod } from './fixtures.js';

const podNetwork = staticPod({ hostNetwork: false });

function conditionWith(sandboxes: RuntimeSandbox[], pod = podNetwork) {
  const s = generatePodStatus(input({ pod, runtime: runtimePod(sandboxes, [ctr('c1', 'app')]) }));
  return s.conditions?.find((c) => c.type === 'PodReadyToStartContainers');
}

describe('PodReadyToStartContainers', () => {
  it.each([
    ['no sandbox yet', [], 'False'],
    ['a ready sandbox with its IP', [sandbox('s1', { ip: '10.88.0.5' })], 'True'],
    ['a ready sandbox whose network is not set up (no IP)', [sandbox('s1', { ip: '' })], 'False'],
    [
      'the newest sandbox not ready',
      [sandbox('s2', { ip: '10.88.0.6', state: PodSandboxState.SANDBOX_NOTREADY }), sandbox('s1', { ip: '10.88.0.5' })],
      'False',
    ],
    ['two ready sandboxes', [sandbox('s2', { ip: '10.88.0.6' }), sandbox('s1', { ip: '10.88.0.5' })], 'False'],
  ] as const)('%s: %s', (_name, sandboxes, status) => {
    const c = conditionWith([...sandboxes]);
    expect(c?.status).toBe(status);
    expect(c?.reason).toBeUndefined();
  });

  it('a host-network pod needs no IP', () => {
    expect(conditionWith([sandbox('s1', { ip: '' })], staticPod({ hostNetwork: true }))?.status).toBe('True');
  });
});
