// Pods and runtime containers for the runtime unit tests, shaped as config and the runtime reader hand them over.
import type { Container } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../../../src/config/types.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { RuntimeContainer } from '../../../src/kuberuntime/runtime-pods.js';

export type TestPod = StaticPod['pod'];

export const UID = '0123456789abcdef0123456789abcdef';

export function container(over: Partial<Container> = {}): Container {
  return {
    name: 'app',
    image: 'bootlet.local/busybox:1.36',
    imagePullPolicy: 'IfNotPresent',
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    ...over,
  };
}

export function pod(
  over: {
    spec?: Partial<NonNullable<TestPod['spec']>>;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  } = {},
): TestPod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-node1',
      namespace: 'kube-system',
      uid: UID,
      labels: over.labels ?? { component: 'web', tier: 'control-plane' },
      annotations: over.annotations ?? {
        'kubernetes.io/config.hash': UID,
        'kubernetes.io/config.source': 'file',
        'kubernetes.io/config.seen': '2026-11-29T17:00:00.000000000Z',
      },
    },
    spec: {
      nodeName: 'node1',
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      securityContext: {},
      containers: [container()],
      ...over.spec,
    },
  };
}

/** A container that exited with code 1 (override any field), its pod's labels with `policy` as its terminationMessagePolicy. */
export function exitedContainer(over: Partial<RuntimeContainer>, policy: string): RuntimeContainer {
  return {
    id: 'c',
    sandboxId: 's',
    name: 'main',
    state: ContainerState.CONTAINER_EXITED,
    createdAt: 1,
    startedAt: 1,
    finishedAt: 2,
    exitCode: 1,
    reason: 'Error',
    message: '',
    imageRef: '',
    image: '',
    hasStatus: true,
    meta: {
      podName: 'p',
      podNamespace: 'ns',
      podUid: 'u',
      containerName: 'main',
      hash: '1',
      restartCount: 0,
      terminationMessagePolicy: policy,
    },
    ...over,
  };
}
