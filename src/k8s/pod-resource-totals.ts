// A pod's requests and limits summed as the scheduler and the kubelet's ResourceConfigForPod sum
// them: regular containers and sidecars add up, a plain init container counts while it runs alone
// (with the sidecars started before it), overhead is added. The pod cgroup (src/cm) and the
// memory-backed emptyDir's default size (src/node) read the same sums.
import type { Pod } from 'kubernetes-types/core/v1';
import { parseQuantity, Quantity } from './quantity.js';
import { isRestartableInit } from './restart.js';

export type ResourceList = Map<string, Quantity>;

function list(src: Record<string, string | number> | undefined): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of Object.entries(src ?? {})) out.set(k, parseQuantity(v));
  return out;
}

function add(into: ResourceList, from: ResourceList): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? Quantity.zero()).plus(v));
}

function max(into: ResourceList, from: ResourceList): void {
  for (const [k, v] of from) {
    const cur = into.get(k);
    if (!cur || v.cmp(cur) > 0) into.set(k, v);
  }
}

/**
 * Sums one side (requests or limits) of the pod's containers, calling `each` with what every
 * container effectively needs (an init container together with the sidecars started before it).
 */
export function podResourceTotals(
  pod: Pod,
  side: 'requests' | 'limits',
  each?: (r: ResourceList) => void,
): ResourceList {
  const total: ResourceList = new Map();
  for (const c of pod.spec?.containers ?? []) {
    const r = list(c.resources?.[side]);
    each?.(r);
    add(total, r);
  }
  const sidecars: ResourceList = new Map();
  const initPeak: ResourceList = new Map();
  for (const c of pod.spec?.initContainers ?? []) {
    const own = list(c.resources?.[side]);
    let effective: ResourceList;
    if (isRestartableInit(c)) {
      add(total, own);
      add(sidecars, own);
      effective = sidecars;
    } else {
      effective = new Map(own);
      add(effective, sidecars);
    }
    each?.(effective);
    max(initPeak, effective);
  }
  max(total, initPeak);
  const overhead = list(pod.spec?.overhead);
  if (side === 'requests') add(total, overhead);
  else for (const [k, v] of overhead) if (total.get(k)?.isZero() === false) total.set(k, total.get(k)!.plus(v));
  return total;
}

/**
 * The pod's memory limit in bytes as its cgroup gets it (ResourceConfigForPod): the sum of the
 * limits when every container declares one, otherwise none (undefined).
 */
export function podMemoryLimitBytes(pod: Pod): number | undefined {
  let declared = true;
  const limits = podResourceTotals(pod, 'limits', (r) => {
    if (r.get('memory')?.isZero() !== false) declared = false;
  });
  return declared ? (limits.get('memory')?.value() ?? 0) : undefined;
}
