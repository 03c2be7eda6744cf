// The eviction manager's admit handler: while the node is under pressure (the hard eviction
// thresholds the Node's MemoryPressure and DiskPressure conditions report), a critical pod is still
// admitted; under memory pressure alone only a BestEffort pod is refused (unless it tolerates the
// memory-pressure taint); under any other pressure every other pod is.
import type { Pod } from 'kubernetes-types/core/v1';
import { isCriticalPod } from '../k8s/priority.js';
import { qosClass } from '../k8s/qos.js';
import type { AdmitResult, PressureCondition } from './node-facts.js';
import { tolerates } from './taints.js';

/** v1.TaintNodeMemoryPressure. */
const MEMORY_PRESSURE_TAINT = { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' } as const;

/** The handler's refusal, or undefined when it admits the pod. */
export function evictionRefusal(
  pod: Pod,
  conditions: readonly PressureCondition[],
): (AdmitResult & { readonly admit: false }) | undefined {
  if (conditions.length === 0 || isCriticalPod(pod)) return undefined;
  if (conditions.length === 1 && conditions[0] === 'MemoryPressure') {
    if (qosClass(pod) !== 'BestEffort') return undefined;
    if ((pod.spec?.tolerations ?? []).some((t) => tolerates(t, MEMORY_PRESSURE_TAINT))) return undefined;
  }
  // nodeConditionMessageFmt with Go's %v of the list.
  return { admit: false, reason: 'Evicted', message: `The node had condition: [${conditions.join(' ')}]. ` };
}
