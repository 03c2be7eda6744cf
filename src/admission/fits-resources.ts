// The scheduler's noderesources Fits as the kubelet runs it: the pod count first (maxPods), then cpu,
// memory and ephemeral-storage requests against what allocatable leaves after the other admitted
// pods' requests. A pod that requests nothing only needs a pod slot.
import type { Pod } from 'kubernetes-types/core/v1';
import type { NodeResources } from './node-facts.js';
import { podRequests, type PodRequests } from './pod-requests.js';

export type ResourceName = 'pods' | 'cpu' | 'memory' | 'ephemeral-storage';

export interface InsufficientResource {
  readonly resourceName: ResourceName;
  readonly requested: number;
  readonly used: number;
  readonly capacity: number;
}

/** The requests of the other pods, summed (nodeInfo.Requested). */
export function usedBy(others: readonly Pod[]): PodRequests {
  const used = { milliCPU: 0, memory: 0, ephemeralStorage: 0 };
  for (const p of others) {
    const r = podRequests(p);
    used.milliCPU += r.milliCPU;
    used.memory += r.memory;
    used.ephemeralStorage += r.ephemeralStorage;
  }
  return used;
}

export function insufficientResources(
  pod: Pod,
  others: readonly Pod[],
  allocatable: NodeResources,
): InsufficientResource[] {
  const out: InsufficientResource[] = [];
  if (others.length + 1 > allocatable.pods)
    out.push({ resourceName: 'pods', requested: 1, used: others.length, capacity: allocatable.pods });
  const req = podRequests(pod);
  if (req.milliCPU === 0 && req.memory === 0 && req.ephemeralStorage === 0) return out;
  const used = usedBy(others);
  const check = (resourceName: ResourceName, requested: number, inUse: number, capacity: number): void => {
    if (requested > 0 && requested > capacity - inUse) out.push({ resourceName, requested, used: inUse, capacity });
  };
  check('cpu', req.milliCPU, used.milliCPU, allocatable.milliCPU);
  check('memory', req.memory, used.memory, allocatable.memory);
  check('ephemeral-storage', req.ephemeralStorage, used.ephemeralStorage, allocatable.ephemeralStorage);
  return out;
}

/** InsufficientResourceError.Error(). */
export function insufficientMessage(r: InsufficientResource): string {
  return `Node didn't have enough resource: ${r.resourceName}, requested: ${r.requested}, used: ${r.used}, capacity: ${r.capacity}`;
}

/** The kubelet's OutOfcpu, OutOfmemory, OutOfephemeral-storage, OutOfpods. */
export function insufficientReason(r: InsufficientResource): string {
  return `OutOf${r.resourceName}`;
}
