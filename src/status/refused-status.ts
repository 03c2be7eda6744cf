// The status of a pod refused at admission, as the kubelet's rejectPod sets it: phase Failed, the
// admission reason and message, and the QoS class; no containers ever ran.
import type { Pod, PodStatus } from 'kubernetes-types/core/v1';
import { qosClass } from '../k8s/qos.js';

export function refusedPodStatus(pod: Pod, reason: string, message: string): PodStatus {
  return { phase: 'Failed', reason, message, qosClass: qosClass(pod) };
}
