// The labels and annotations the kubelet writes on CRI sandboxes and containers, and their reading
// back. They are the only record of what a pod is running: a restarted agent adopts containers by
// them, and crictl / log shippers read them. Value formats follow kuberuntime/labels.go; the keys
// are src/k8s/cri-labels.ts.
import type { Container, ContainerPort, LifecycleHandler } from 'kubernetes-types/core/v1';
import type { KeyValueMap } from '../cri/cri-types.js';
import {
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
  POD_UID_LABEL,
  CONTAINER_NAME_LABEL,
  POD_DELETION_GRACE_PERIOD_ANNOTATION,
  POD_TERMINATION_GRACE_PERIOD_ANNOTATION,
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION,
  CONTAINER_PRESTOP_HANDLER_ANNOTATION,
  CONTAINER_PORTS_ANNOTATION,
  CONTAINER_TYPE_ANNOTATION,
  BOOTLET_CONTAINER_HASH_ANNOTATION,
  BOOTLET_RESTARTED_AT_ANNOTATION,
} from '../k8s/cri-labels.js';
import type { LabelledPod } from '../k8s/pod.js';
import { checkNamespace, checkPodName, checkPodUID } from '../node/pod-dirs.js';
import { UnsafePathComponentError } from '../node/volume-errors.js';

/** Written as io.kubernetes.container.type; 'ephemeral' for a debug container added through the API. */
export type ContainerType = 'init' | 'container' | 'ephemeral';

export function sandboxLabels(pod: LabelledPod): KeyValueMap {
  // Pod labels first, so a pod label cannot shadow the three identity labels.
  return {
    ...(pod.metadata.labels ?? {}),
    [POD_NAME_LABEL]: pod.metadata.name,
    [POD_NAMESPACE_LABEL]: pod.metadata.namespace,
    [POD_UID_LABEL]: pod.metadata.uid,
  };
}

export function sandboxAnnotations(pod: LabelledPod): KeyValueMap {
  return { ...(pod.metadata.annotations ?? {}) };
}

/** Container labels carry identity only: no pod labels (as the kubelet). */
export function containerLabels(pod: LabelledPod, containerName: string): KeyValueMap {
  return {
    [POD_NAME_LABEL]: pod.metadata.name,
    [POD_NAMESPACE_LABEL]: pod.metadata.namespace,
    [POD_UID_LABEL]: pod.metadata.uid,
    [CONTAINER_NAME_LABEL]: containerName,
  };
}

export interface ContainerAnnotationOptions {
  /** Lowercase hex from kubeletContainerHash(): what a kubelet writes and compares. */
  hash: string;
  /** Lowercase hex from hashContainer(): bootlet's whole-spec fingerprint. */
  specHash?: string;
  restartCount: number;
  type: ContainerType;
  /** The restart request (the mirror's restartedAt) this container was started under, if any. */
  restartedAt?: string;
}

export function containerAnnotations(
  pod: LabelledPod,
  container: Container,
  opts: ContainerAnnotationOptions,
): KeyValueMap {
  const a: KeyValueMap = {
    [CONTAINER_HASH_ANNOTATION]: opts.hash,
    ...(opts.specHash !== undefined ? { [BOOTLET_CONTAINER_HASH_ANNOTATION]: opts.specHash } : {}),
    [CONTAINER_RESTART_COUNT_ANNOTATION]: String(opts.restartCount),
    // Written even when empty, as the kubelet does (defaulting normally fills them).
    [CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION]: container.terminationMessagePath ?? '',
    [CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION]: container.terminationMessagePolicy ?? '',
  };
  if (pod.metadata.deletionGracePeriodSeconds != null) {
    a[POD_DELETION_GRACE_PERIOD_ANNOTATION] = String(pod.metadata.deletionGracePeriodSeconds);
  }
  if (pod.spec?.terminationGracePeriodSeconds != null) {
    a[POD_TERMINATION_GRACE_PERIOD_ANNOTATION] = String(pod.spec.terminationGracePeriodSeconds);
  }
  // JSON so that the stop path can be rebuilt for an orphan whose manifest is gone.
  if (container.lifecycle?.preStop)
    a[CONTAINER_PRESTOP_HANDLER_ANNOTATION] = JSON.stringify(container.lifecycle.preStop);
  if (container.ports && container.ports.length > 0)
    a[CONTAINER_PORTS_ANNOTATION] = containerPortsJson(container.ports);
  a[CONTAINER_TYPE_ANNOTATION] = opts.type;
  if (opts.restartedAt !== undefined) a[BOOTLET_RESTARTED_AT_ANNOTATION] = opts.restartedAt;
  return a;
}

/**
 * The ports as Go's json.Marshal writes []v1.ContainerPort: fields in struct order (name,
 * hostPort, containerPort, protocol, hostIP), the omitempty ones left out when zero, whatever
 * order the manifest had.
 */
export function containerPortsJson(ports: ContainerPort[]): string {
  return JSON.stringify(
    ports.map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      ...(p.hostPort ? { hostPort: p.hostPort } : {}),
      containerPort: p.containerPort,
      ...(p.protocol ? { protocol: p.protocol } : {}),
      ...(p.hostIP ? { hostIP: p.hostIP } : {}),
    })),
  );
}

export interface SandboxIdentity {
  podName: string;
  podNamespace: string;
  podUid: string;
}

export interface ContainerMeta extends SandboxIdentity {
  containerName: string;
  /** Lowercase hex as written; '0' when missing or unparsable (the kubelet reads it as 0). */
  hash: string;
  /** bootlet's whole-spec fingerprint, when bootlet made the container. */
  specHash?: string;
  restartCount: number;
  terminationGracePeriodSeconds?: number;
  deletionGracePeriodSeconds?: number;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  type?: ContainerType;
  preStop?: LifecycleHandler;
  ports?: ContainerPort[];
  /** The restart request (a mirror's restartedAt) already acted on when this container was started. */
  restartedAt?: string;
}

/** Identity of a kubelet-style object, or undefined for anything else (crictl pods, other tools). */
export function parseSandboxLabels(labels: KeyValueMap | null | undefined): SandboxIdentity | undefined {
  const podName = labels?.[POD_NAME_LABEL];
  const podNamespace = labels?.[POD_NAMESPACE_LABEL];
  const podUid = labels?.[POD_UID_LABEL];
  if (!podName || !podNamespace || !podUid) return undefined;
  return { podName, podNamespace, podUid };
}

/**
 * Why the identity labels cannot be used (namespace a DNS label, name a DNS subdomain, uid 1-36
 * characters of [0-9A-Za-z-]), or undefined. Such an object is never touched: its labels end up in
 * paths (pod and log directories) and in the names of what bootlet would stop.
 */
export function identityProblem(id: SandboxIdentity): string | undefined {
  try {
    checkNamespace(id.podNamespace);
    checkPodName(id.podName);
    checkPodUID(id.podUid);
    return undefined;
  } catch (err) {
    if (err instanceof UnsafePathComponentError) return err.message;
    throw err;
  }
}

function parseHash(s: string | undefined): string {
  if (s === undefined || !/^[0-9a-fA-F]{1,16}$/.test(s)) return '0';
  // Normalised so that '00ab' and 'ab' (the same uint64) compare equal.
  return BigInt(`0x${s}`).toString(16);
}

function parseDecimal(s: string | undefined): number | undefined {
  if (s === undefined || !/^[+-]?\d+$/.test(s.trim())) return undefined;
  return Number.parseInt(s, 10);
}

function parseJson<T>(s: string | undefined, ok: (v: unknown) => boolean): T | undefined {
  if (s === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(s);
    return ok(v) ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}

export function parseContainerMeta(
  labels: KeyValueMap | null | undefined,
  annotations: KeyValueMap | null | undefined,
): ContainerMeta | undefined {
  const identity = parseSandboxLabels(labels);
  const containerName = labels?.[CONTAINER_NAME_LABEL];
  if (!identity || !containerName) return undefined;
  const a = annotations ?? {};
  const meta: ContainerMeta = {
    ...identity,
    containerName,
    hash: parseHash(a[CONTAINER_HASH_ANNOTATION]),
    restartCount: parseDecimal(a[CONTAINER_RESTART_COUNT_ANNOTATION]) ?? 0,
  };
  const specHash = a[BOOTLET_CONTAINER_HASH_ANNOTATION];
  if (specHash !== undefined && /^[0-9a-f]{1,16}$/.test(specHash)) meta.specHash = parseHash(specHash);
  const grace = parseDecimal(a[POD_TERMINATION_GRACE_PERIOD_ANNOTATION]);
  if (grace !== undefined) meta.terminationGracePeriodSeconds = grace;
  const deletionGrace = parseDecimal(a[POD_DELETION_GRACE_PERIOD_ANNOTATION]);
  if (deletionGrace !== undefined) meta.deletionGracePeriodSeconds = deletionGrace;
  const path = a[CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION];
  if (path) meta.terminationMessagePath = path;
  const policy = a[CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION];
  if (policy) meta.terminationMessagePolicy = policy;
  const type = a[CONTAINER_TYPE_ANNOTATION];
  if (type === 'init' || type === 'container' || type === 'ephemeral') meta.type = type;
  const preStop = parseJson<LifecycleHandler>(
    a[CONTAINER_PRESTOP_HANDLER_ANNOTATION],
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  );
  if (preStop) meta.preStop = preStop;
  const ports = parseJson<ContainerPort[]>(a[CONTAINER_PORTS_ANNOTATION], Array.isArray);
  if (ports) meta.ports = ports;
  const restartedAt = a[BOOTLET_RESTARTED_AT_ANNOTATION];
  if (restartedAt !== undefined) meta.restartedAt = restartedAt;
  return meta;
}
