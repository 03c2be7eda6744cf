// The pod's QoS class, computed as the API server does (GetPodQOS): only cpu and memory count,
// zero quantities count as unset, init containers count.
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { parseQuantity, Quantity } from './quantity.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'] as const;

export function qosClass(pod: Pod): QOSClass {
  const requests = new Map<string, Quantity>();
  const limits = new Map<string, Quantity>();
  let guaranteed = true;
  const all: Container[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  for (const c of all) {
    for (const name of QOS_RESOURCES) {
      const r = c.resources?.requests?.[name];
      if (r !== undefined) {
        const q = parseQuantity(r);
        if (q.cmp(Quantity.zero()) > 0) requests.set(name, (requests.get(name) ?? Quantity.zero()).plus(q));
      }
    }
    const limitsFound = new Set<string>();
    for (const name of QOS_RESOURCES) {
      const l = c.resources?.limits?.[name];
      if (l !== undefined) {
        const q = parseQuantity(l);
        if (q.cmp(Quantity.zero()) > 0) {
          limitsFound.add(name);
          limits.set(name, (limits.get(name) ?? Quantity.zero()).plus(q));
        }
      }
    }
    // Every container must limit both cpu and memory for the pod to be Guaranteed.
    if (limitsFound.size !== QOS_RESOURCES.length) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed && requests.size === limits.size) {
    for (const [name, req] of requests) {
      const lim = limits.get(name);
      if (!lim || lim.cmp(req) !== 0) guaranteed = false;
    }
  } else {
    guaranteed = false;
  }
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
