// The prober probes a pod where the kubelet does (status.podIP): the node for a host-network pod,
// its sandbox's IP for a pod on the pod network.
import { describe, expect, it } from 'vitest';
import type { Pod } from 'kubernetes-types/core/v1';
import { PodSandboxState } from '../../../src/cri/cri-types.js';
import type { RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import type { DefaultedPod } from '../../../src/k8s/pod.js';
import { linkProber } from '../../../src/prober/pod-worker-link.js';
import type { ProberManager } from '../../../src/prober/prober-manager.js';
import type { PodWorkers } from '../../../src/podworkers/pod-workers.js';

function link(): { added: [string, string][]; synced: (pod: Pod, runtime: RuntimePod | undefined) => void } {
  const added: [string, string][] = [];
  const prober = {
    onFailure: () => {},
    addPod: (p: Pod, ip: string) => added.push([p.metadata!.name!, ip]),
    containerStarted: () => {},
    containerStopped: () => {},
  } as unknown as ProberManager;
  const observer = linkProber(prober, {} as PodWorkers, '192.0.2.10');
  return { added, synced: (pod, runtime) => observer.podSynced!(pod as DefaultedPod, runtime, false) };
}

const pod = (name: string, hostNetwork: boolean): Pod => ({
  metadata: { name, namespace: 'kube-system', uid: `uid-${name}` },
  spec: { hostNetwork, containers: [] },
});
const withSandbox = (ip: string): RuntimePod => ({
  uid: 'u',
  name: 'n',
  namespace: 'kube-system',
  containers: [],
  sandboxes: [
    { id: 's', state: PodSandboxState.SANDBOX_READY, createdAt: 1, attempt: 0, ip, additionalIps: [], hasStatus: true },
  ],
});

describe('where the prober probes a pod', () => {
  it("a host-network pod at the node's IP, a pod-network pod at its sandbox's (the node's before it has one)", () => {
    const { added, synced } = link();
    synced(pod('proxy', true), withSandbox(''));
    synced(pod('dns', false), undefined);
    synced(pod('dns', false), withSandbox('10.244.7.2'));
    expect(added).toEqual([
      ['proxy', '192.0.2.10'],
      ['dns', '192.0.2.10'],
      ['dns', '10.244.7.2'],
    ]);
  });
});
