// The order HandlePodAdditions admits a batch in: by creation time, oldest first. A static pod has
// no creationTimestamp of its own, so the time the agent first saw it (`kubernetes.io/config.seen`)
// stands in; the key breaks ties so that a restart admits the same pods as before.
import type { Pod } from 'kubernetes-types/core/v1';
import { CONFIG_SEEN } from '../k8s/annotations.js';

function createdAt(pod: Pod): number {
  const t = pod.metadata?.creationTimestamp ?? pod.metadata?.annotations?.[CONFIG_SEEN];
  const ms = t === undefined ? Number.NaN : Date.parse(t);
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}

export function byCreationTime<T extends { readonly pod: Pod; readonly key: string }>(pods: readonly T[]): T[] {
  return [...pods].sort((a, b) => createdAt(a.pod) - createdAt(b.pod) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
