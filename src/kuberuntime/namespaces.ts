// Linux namespace modes of a pod, shared by its sandbox and every container (NamespacesForPod).
import type { Pod } from 'kubernetes-types/core/v1';
import { NamespaceMode, type NamespaceOption } from '../cri/cri-types.js';

export function namespacesForPod(pod: Pod): NamespaceOption {
  const spec = pod.spec;
  return {
    network: spec?.hostNetwork ? NamespaceMode.NODE : NamespaceMode.POD,
    ipc: spec?.hostIPC ? NamespaceMode.NODE : NamespaceMode.POD,
    // Without hostPID or shareProcessNamespace each container gets its own PID namespace.
    pid: spec?.hostPID ? NamespaceMode.NODE : spec?.shareProcessNamespace ? NamespaceMode.POD : NamespaceMode.CONTAINER,
  };
}
