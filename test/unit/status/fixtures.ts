// Builders for status tests: a defaulted static pod, runtime sandboxes and containers, probes.
import type { Container, PodSpec } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../../../src/config/types.js';
import { ContainerState, PodSandboxState } from '../../../src/cri/cri-types.js';
import type { RuntimeContainer, RuntimePod, RuntimeSandbox } from '../../../src/kuberuntime/runtime-pods.js';
import type { GenerateInput, ProbeState, WaitingReason } from '../../../src/status/types.js';

export const UID = '0123456789abcdef0123456789abcdef';
/** 2025-01-01T10:00:00Z */
export const T0 = Date.UTC(2025, 0, 1, 10, 0, 0);
export const ns = (ms: number): number => ms * 1e6;
export const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

export function staticPod(spec: Partial<PodSpec> & { containers?: Container[] } = {}): StaticPod['pod'] {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-node1',
      namespace: 'default',
      uid: UID,
      annotations: {
        'kubernetes.io/config.seen': new Date(T0).toISOString(),
        'kubernetes.io/config.source': 'file',
        'kubernetes.io/config.hash': UID,
      },
    },
    spec: {
      restartPolicy: 'Always',
      hostNetwork: true,
      nodeName: 'node1',
      containers: [{ name: 'app', image: 'busybox:1.36' }],
      ...spec,
    },
  };
}

export function sandbox(id = 's1', o: Partial<RuntimeSandbox> = {}): RuntimeSandbox {
  return {
    id,
    state: PodSandboxState.SANDBOX_READY,
    createdAt: ns(T0 + 1000),
    attempt: 0,
    ip: '',
    additionalIps: [],
    hasStatus: true,
    ...o,
  };
}

export interface CtrOptions extends Partial<Omit<RuntimeContainer, 'meta'>> {
  restartCount?: number;
  type?: 'init' | 'container' | 'ephemeral';
}

export function ctr(id: string, name: string, o: CtrOptions = {}): RuntimeContainer {
  const { restartCount, type, ...rest } = o;
  return {
    id,
    sandboxId: 's1',
    name,
    state: ContainerState.CONTAINER_RUNNING,
    createdAt: ns(T0 + 2000),
    startedAt: ns(T0 + 3000),
    finishedAt: 0,
    exitCode: 0,
    reason: '',
    message: '',
    imageRef: 'docker.io/library/busybox@sha256:abc',
    image: 'docker.io/library/busybox:1.36',
    hasStatus: true,
    meta: {
      podName: 'web-node1',
      podNamespace: 'default',
      podUid: UID,
      containerName: name,
      hash: '1',
      restartCount: restartCount ?? 0,
      type: type ?? 'container',
    },
    ...rest,
  };
}

export function exited(id: string, name: string, exitCode: number, o: CtrOptions = {}): RuntimeContainer {
  return ctr(id, name, {
    state: ContainerState.CONTAINER_EXITED,
    exitCode,
    reason: exitCode === 0 ? 'Completed' : 'Error',
    finishedAt: ns(T0 + 9000),
    ...o,
  });
}

/** Containers newest first, as readRuntimePods returns them. */
export function runtimePod(sandboxes: RuntimeSandbox[], containers: RuntimeContainer[]): RuntimePod {
  const newestFirst = [...containers].sort((a, b) => b.createdAt - a.createdAt);
  return { uid: UID, name: 'web-node1', namespace: 'default', sandboxes, containers: newestFirst };
}

export function probes(ready: Record<string, boolean> = {}, started: Record<string, boolean> = {}): ProbeState {
  return { ready: (_uid, name) => ready[name], started: (_uid, name) => started[name] };
}

export function input(o: Partial<GenerateInput> & { pod?: StaticPod['pod'] } = {}): GenerateInput {
  return {
    pod: o.pod ?? staticPod(),
    runtime: undefined,
    probes: probes(),
    waiting: new Map<string, WaitingReason>(),
    nodeIP: '10.0.0.11',
    runtimeName: 'containerd',
    now: new Date(T0 + 60_000),
    ...o,
  };
}
