// The kubelet's critical pod admission handler: a critical pod refused only for resources is
// admitted after evicting other pods that free at least what it lacks. Victims are chosen as the
// kubelet chooses them: BestEffort first, then Burstable, then Guaranteed, each class taking the
// fewest pods closest to what is still missing (smaller requests first on a tie).
import type { Pod } from 'kubernetes-types/core/v1';
import { qosClass } from '../k8s/qos.js';
import { isCriticalPod } from '../k8s/priority.js';
import type { InsufficientResource, ResourceName } from './fits-resources.js';
import { podRequests } from './pod-requests.js';

interface Requirement {
  readonly resourceName: ResourceName;
  readonly quantity: number;
}

/** kubetypes.Preemptable. */
export function preemptable(preemptor: Pod, preemptee: Pod): boolean {
  return preemptableBy(preemptor, isCriticalPod(preemptor), preemptee);
}

/** As preemptable, with the preemptor's criticality known (asked once per admission, not once per other pod). */
function preemptableBy(preemptor: Pod, preemptorCritical: boolean, preemptee: Pod): boolean {
  if (preemptorCritical && !isCriticalPod(preemptee)) return true;
  const a = preemptor.spec?.priority;
  const b = preemptee.spec?.priority;
  return a !== undefined && b !== undefined && a > b;
}

function requestOf(pod: Pod, name: ResourceName): number {
  if (name === 'pods') return 1;
  const r = podRequests(pod);
  return name === 'cpu' ? r.milliCPU : name === 'memory' ? r.memory : r.ephemeralStorage;
}

function subtract(reqs: readonly Requirement[], pods: readonly Pod[]): Requirement[] {
  const out: Requirement[] = [];
  for (const r of reqs) {
    let q = r.quantity;
    for (const p of pods) {
      q -= requestOf(p, r.resourceName);
      if (q <= 0) break;
    }
    if (q > 0) out.push({ resourceName: r.resourceName, quantity: q });
  }
  return out;
}

function distance(reqs: readonly Requirement[], pod: Pod): number {
  let d = 0;
  for (const r of reqs) {
    const remaining = r.quantity - requestOf(pod, r.resourceName);
    if (remaining > 0) d += (remaining / r.quantity) ** 2;
  }
  return d;
}

function smaller(a: Pod, b: Pod): boolean {
  for (const name of ['memory', 'cpu'] as const) {
    const x = requestOf(a, name);
    const y = requestOf(b, name);
    if (x !== y) return x < y;
  }
  return true;
}

export function requirementsText(reqs: readonly Requirement[]): string {
  return `[${reqs.map((r) => `(res: ${r.resourceName}, q: ${r.quantity}), `).join('')}]`;
}

/** The pods chosen, or the requirements no set of them meets. */
type Chosen = { readonly pods: Pod[] } | { readonly unmet: readonly Requirement[] };

function byDistance(candidates: readonly Pod[], reqs: Requirement[]): Chosen {
  const pods = [...candidates];
  const out: Pod[] = [];
  while (reqs.length > 0) {
    if (pods.length === 0) return { unmet: reqs };
    let best = 0;
    let bestDistance = reqs.length + 1;
    pods.forEach((p, i) => {
      const d = distance(reqs, p);
      if (d < bestDistance || (d === bestDistance && smaller(p, pods[best]!))) {
        bestDistance = d;
        best = i;
      }
    });
    const chosen = pods.splice(best, 1)[0]!;
    reqs = subtract(reqs, [chosen]);
    out.push(chosen);
  }
  return { pods: out };
}

export type PreemptionResult = { readonly victims: readonly Pod[] } | { readonly error: string };

/** The pods to evict so that `pod` fits, or why there is no such set (getPodsToPreempt). */
export function podsToPreempt(
  pod: Pod,
  others: readonly Pod[],
  lacking: readonly InsufficientResource[],
): PreemptionResult {
  const reqs: Requirement[] = lacking.map((r) => ({
    resourceName: r.resourceName,
    quantity: r.requested - (r.capacity - r.used),
  }));
  const classes = { BestEffort: [] as Pod[], Burstable: [] as Pod[], Guaranteed: [] as Pod[] };
  const critical = isCriticalPod(pod);
  for (const o of others) if (preemptableBy(pod, critical, o)) classes[qosClass(o)].push(o);
  const { BestEffort: bestEffort, Burstable: burstable, Guaranteed: guaranteed } = classes;
  const noSet = (unmet: readonly Requirement[]): PreemptionResult => ({
    error: `preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: ${requirementsText(unmet)}`,
  });
  const unmet = subtract(reqs, [...bestEffort, ...burstable, ...guaranteed]);
  if (unmet.length > 0) return noSet(unmet);
  const g = byDistance(guaranteed, subtract(reqs, [...bestEffort, ...burstable]));
  if ('unmet' in g) return noSet(g.unmet);
  const bu = byDistance(burstable, subtract(reqs, [...bestEffort, ...g.pods]));
  if ('unmet' in bu) return noSet(bu.unmet);
  const be = byDistance(bestEffort, subtract(reqs, [...bu.pods, ...g.pods]));
  if ('unmet' in be) return noSet(be.unmet);
  return { victims: [...be.pods, ...bu.pods, ...g.pods] };
}
