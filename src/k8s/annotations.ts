// The annotation keys that make a pod static (kubetypes in pkg/kubelet/types/pod_update.go): the
// config source writes the first three on every static pod, the mirror pod carries the fourth.
import type { Pod } from 'kubernetes-types/core/v1';

/** The pod's UID as its source computed it; a mirror pod's `config.mirror` must equal it. */
export const CONFIG_HASH = 'kubernetes.io/config.hash';
/** `file`, `http` or `api`: which source the pod came from (copied onto the sandbox). */
export const CONFIG_SOURCE = 'kubernetes.io/config.source';
/** When the source first saw this UID (RFC 3339 with nanoseconds). */
export const CONFIG_SEEN = 'kubernetes.io/config.seen';
/** On a mirror pod only: the static pod's config hash, which ties the two together. */
export const CONFIG_MIRROR = 'kubernetes.io/config.mirror';
/** types.IsMirrorPod: the API's copy of a static pod, which carries `config.mirror`. */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata?.annotations?.[CONFIG_MIRROR] !== undefined;
}

/** What `kubectl rollout restart` writes on a template; set on a mirror pod, bootlet restarts that static pod's containers once per value. */
export const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

/** The annotations a source adds, which differ between two agents by nature (UID, time first seen, source). */
export const SOURCE_ANNOTATIONS: ReadonlySet<string> = new Set([CONFIG_HASH, CONFIG_SEEN, CONFIG_SOURCE]);

/** The sources whose pods exist only because a node agent read them: they are the node's to stop. */
export const STATIC_SOURCES: ReadonlySet<string> = new Set(['file', 'http']);
