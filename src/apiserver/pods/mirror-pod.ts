// What a mirror pod is: the API's read-only copy of a static pod, tied to it by the
// `kubernetes.io/config.mirror` annotation (= the static pod's config hash) and owned by the Node.
import type { Pod } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../../config/types.js';
import { CONFIG_HASH, CONFIG_MIRROR } from '../../k8s/annotations.js';

export function podKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
}

/** The static pod's hash, which its mirror must carry. */
export function staticHash(sp: StaticPod): string {
  return sp.pod.metadata.annotations[CONFIG_HASH] ?? sp.uid;
}

/** IsMirrorPodOf: same name and namespace, and the mirror annotation equals the static pod's hash. */
export function isMirrorOf(mirror: Pod, sp: StaticPod): boolean {
  return (
    mirror.metadata?.name === sp.pod.metadata.name &&
    mirror.metadata?.namespace === sp.pod.metadata.namespace &&
    mirror.metadata?.annotations?.[CONFIG_MIRROR] === staticHash(sp)
  );
}

/**
 * The Priority admission plugin computes spec.priority from priorityClassName on create and
 * refuses a pod that brings a number of its own (older servers refuse any number), so the mirror
 * never carries one; the server fills it in. With a class named, it derives preemptionPolicy
 * from the class too and refuses a different one, so that goes as well.
 */
function mirrorSpec(spec: Pod['spec'], nodeName: string): NonNullable<Pod['spec']> {
  const { priority: _priority, preemptionPolicy, ...rest } = structuredClone(spec ?? { containers: [] });
  return {
    ...rest,
    ...(preemptionPolicy !== undefined && !rest.priorityClassName ? { preemptionPolicy } : {}),
    nodeName,
  };
}

/**
 * The mirror pod to POST: a copy of the static pod without its identity (the server gives it a UID)
 * or status, bound to this node, annotated and owned as NodeRestriction demands.
 */
export function buildMirrorPod(sp: StaticPod, nodeName: string, nodeUid: string): Pod {
  const src = sp.pod;
  const {
    uid: _uid,
    resourceVersion: _rv,
    creationTimestamp: _ct,
    managedFields: _mf,
    ownerReferences: _or,
    ...meta
  } = structuredClone(src.metadata) as NonNullable<Pod['metadata']> & typeof src.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta,
      name: src.metadata.name,
      namespace: src.metadata.namespace,
      annotations: { ...src.metadata.annotations, [CONFIG_MIRROR]: staticHash(sp) },
      // controller true, blockOwnerDeletion unset: exactly what NodeRestriction admits.
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid, controller: true }],
    },
    spec: mirrorSpec(src.spec, nodeName),
  };
}
