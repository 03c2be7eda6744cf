// Whether a pod's resize can be allocated now (the kubelet's handlePodResourcesResize with its
// resize admit handler and the fit predicate): a pod from a manifest never is (a manifest change is
// a new pod), a pod asking alone for more cpu or memory than the node's allocatable never will be
// here (Infeasible), one that does not fit beside the other admitted pods' allocations waits for room
// (Deferred, in the fit's words); otherwise its resize is allocated.
import type { Pod } from 'kubernetes-types/core/v1';
import { isStaticPod } from '../k8s/priority.js';
import { capacityMessage, STATIC_POD_RESIZE_INFEASIBLE } from '../k8s/resize.js';
import { insufficientMessage, insufficientResources } from './fits-resources.js';
import type { NodeResources } from './node-facts.js';
import type { PendingResize } from './pod-allocations.js';
import { podRequests } from './pod-requests.js';

/** undefined: allocate the resize; otherwise why it waits. */
export function judgeResize(pod: Pod, others: readonly Pod[], allocatable: NodeResources): PendingResize | undefined {
  const generation = pod.metadata?.generation;
  const at = (p: Omit<PendingResize, 'generation'>): PendingResize =>
    generation === undefined ? p : { ...p, generation };
  if (isStaticPod(pod)) return at({ reason: 'Infeasible', message: STATIC_POD_RESIZE_INFEASIBLE });
  const req = podRequests(pod);
  // Memory is named first when both are too large, as the kubelet checks it first.
  if (req.memory > allocatable.memory)
    return at({ reason: 'Infeasible', message: capacityMessage('memory', req.memory, allocatable.memory) });
  if (req.milliCPU > allocatable.milliCPU)
    return at({ reason: 'Infeasible', message: capacityMessage('cpu', req.milliCPU, allocatable.milliCPU) });
  // The pod's own slot is held already: only cpu, memory and ephemeral storage can lack room.
  const short = insufficientResources(pod, others, allocatable).filter((r) => r.resourceName !== 'pods');
  if (short.length > 0) return at({ reason: 'Deferred', message: insufficientMessage(short[0]) });
  return undefined;
}
