// What a runtime pod says about who made it, read back from the labels and annotations a kubelet
// (or bootlet) left on it: whether a static source made it (and so an agent with no manifest for
// it may stop it), and the pod's own labels and annotations.
import { POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from '../k8s/cri-labels.js';
import type { KeyValueMap } from '../cri/cri-types.js';
import type { RuntimePod } from './runtime-pods.js';
import { CONFIG_SOURCE, STATIC_SOURCES } from '../k8s/annotations.js';

/** `kubernetes.io/config.source` of the newest sandbox; undefined when it has none (or there is no sandbox). */
export function configSourceOf(rt: RuntimePod): string | undefined {
  return rt.sandboxes[0]?.annotations?.[CONFIG_SOURCE];
}

/** bootlet made the pod: one of its containers carries bootlet's whole-spec hash. */
export function madeByBootlet(rt: RuntimePod): boolean {
  return rt.containers.some((c) => c.meta.specHash !== undefined);
}

/**
 * A node agent may stop this pod when nothing asks for it: a static source made it, bootlet did, or
 * one of `readSources` did (an agent that reads the API server owns what a kubelet ran from it, as
 * the kubelet stops any runtime pod its sources no longer give).
 */
export function isStaticRuntimePod(rt: RuntimePod, readSources: ReadonlySet<string> = STATIC_SOURCES): boolean {
  const source = configSourceOf(rt);
  return (source !== undefined && (STATIC_SOURCES.has(source) || readSources.has(source))) || madeByBootlet(rt);
}

/** The pod's own labels, as a kubelet copies them onto the sandbox (the three identity labels taken off). */
export function podLabelsOf(rt: RuntimePod): KeyValueMap {
  const {
    [POD_NAME_LABEL]: _n,
    [POD_NAMESPACE_LABEL]: _ns,
    [POD_UID_LABEL]: _u,
    ...labels
  } = rt.sandboxes[0]?.labels ?? {};
  return labels;
}

/** The pod's annotations, as a kubelet copies them onto the sandbox (config.* included). */
export function podAnnotationsOf(rt: RuntimePod): KeyValueMap {
  return { ...(rt.sandboxes[0]?.annotations ?? {}) };
}
