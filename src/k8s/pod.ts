// The pod as the kubelet works with it once a source has read it: scheme defaults applied, and
// name (`<name>-<node>`), namespace, uid and the config annotations always present.
import type { Pod } from 'kubernetes-types/core/v1';

/** A pod with its identity (name, namespace, uid): what the CRI labels, pod directories and logs are made from; a DefaultedPod is one. */
export type LabelledPod = Pod & { metadata: { name: string; namespace: string; uid: string } };

export type DefaultedPod = Pod & {
  metadata: { name: string; namespace: string; uid: string; annotations: Record<string, string> };
};
