// The pod as the kubelet works with it once a source has read it: scheme defaults applied, and
// name (`<name>-<node>`), namespace, uid and the config annotations always present.
import type { Pod } from 'kubernetes-types/core/v1';

export type DefaultedPod = Pod & {
  metadata: { name: string; namespace: string; uid: string; annotations: Record<string, string> };
};
