// Runtime pods as a node agent leaves them in the runtime (a kubelet's, bootlet's, another tool's), for
// the tests of what the agent does with the pods it finds at start.
import { ContainerState, PodSandboxState } from '../../src/cri/cri-types.js';
import { kubeletContainerHash } from '../../src/kuberuntime/container-hash.js';
import type { RuntimePod } from '../../src/kuberuntime/runtime-pods.js';
import type { AdoptionActions } from '../../src/config/pod-config/runtime-adoption.js';
import type { PodConfig } from '../../src/config/pod-config/pod-config.js';

export interface RuntimePodSeed {
  uid: string;
  name: string;
  namespace?: string;
  /** kubernetes.io/config.source on the sandbox; undefined: no such annotation. */
  source?: string;
  /** Made by bootlet: its container carries bootlet's whole-spec hash. */
  bootlet?: boolean;
}

const READY_SANDBOX = { state: PodSandboxState.SANDBOX_READY, createdAt: 1, attempt: 0, ip: '', additionalIps: [] };
/** A container running since it was made, as a status read has it. */
const RUNNING = { state: ContainerState.CONTAINER_RUNNING, createdAt: 2, startedAt: 2, finishedAt: 0, exitCode: 0 };
const OF_IMAGE = { reason: '', message: '', imageRef: 'sha256:x', image: 'img', hasStatus: true };

/** A running pod with one container `main` (image `img`), grace 1 s. */
export function runtimePodOf(s: RuntimePodSeed): RuntimePod {
  const namespace = s.namespace ?? 'kube-system';
  return {
    uid: s.uid,
    name: s.name,
    namespace,
    sandboxes: [
      {
        ...READY_SANDBOX,
        id: `sb-${s.uid}`,
        hasStatus: true,
        labels: {
          'io.kubernetes.pod.name': s.name,
          'io.kubernetes.pod.namespace': namespace,
          'io.kubernetes.pod.uid': s.uid,
        },
        annotations:
          s.source === undefined ? {} : { 'kubernetes.io/config.source': s.source, 'kubernetes.io/config.hash': s.uid },
      },
    ],
    containers: [
      {
        ...RUNNING,
        ...OF_IMAGE,
        name: 'main',
        id: `c-${s.uid}`,
        sandboxId: `sb-${s.uid}`,
        meta: {
          podName: s.name,
          podNamespace: namespace,
          podUid: s.uid,
          containerName: 'main',
          hash: kubeletContainerHash({ name: 'main', image: 'img' }),
          ...(s.bootlet ? { specHash: 'abc' } : {}),
          restartCount: 0,
          terminationGracePeriodSeconds: 1,
        },
      },
    ],
  };
}

/**
 * Starts the set's adoption of `found` (the runtime's first full read) with `actions` (what is not
 * given does nothing) and resolves once every runtime pod has been decided on. The adoption starts
 * when the manifest path is seen in full: call it before `config.feed('file').ready()`, or after.
 */
export function adoptionOf(
  config: PodConfig,
  found: readonly RuntimePod[],
  actions: Partial<AdoptionActions> = {},
): Promise<void> {
  return new Promise<void>((resolve) => {
    config.adoptRuntimePods({
      readAll: async () => new Map(found.map((p) => [p.uid, structuredClone(p)])),
      adoptIdentity: () => {},
      admit: () => {},
      runs: () => false,
      stop: () => {},
      ...actions,
      adopted: () => {
        actions.adopted?.();
        resolve();
      },
    });
  });
}
