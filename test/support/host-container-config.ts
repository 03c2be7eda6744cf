// The container config the agent builds for a host-network pod's container on this machine (host
// and pod IP 127.0.0.1, the machine's memory as the node's), for tests and benches that make the
// CRI calls themselves: a pod handed over by an earlier agent, a raw baseline, a PLEG fixture.
import { totalmem } from 'node:os';
import type { Container } from 'kubernetes-types/core/v1';
import type { ContainerConfig, Mount } from '../../src/cri/cri-types.js';
import type { LabelledPod } from '../../src/k8s/pod.js';
import { buildContainerConfig } from '../../src/kuberuntime/container-config.js';

export interface HostContainerStart {
  readonly nodeName: string;
  readonly imageRef: string;
  /** 0 unless given: the first start. */
  readonly restartCount?: number;
  readonly mounts?: Mount[];
}

export function hostContainerConfig(pod: LabelledPod, container: Container, o: HostContainerStart): ContainerConfig {
  return buildContainerConfig(pod, container, {
    restartCount: o.restartCount ?? 0,
    imageRef: o.imageRef,
    type: 'container',
    nodeName: o.nodeName,
    hostIP: '127.0.0.1',
    podIPs: ['127.0.0.1'],
    mounts: o.mounts ?? [],
    nodeMemoryCapacityBytes: totalmem(),
  });
}
