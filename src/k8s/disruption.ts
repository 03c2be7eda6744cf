// What the kubelet writes on a pod it stops for the node's sake (pkg/kubelet/preemption, eviction,
// nodeshutdown): the DisruptionTarget condition (PodDisruptionConditions, on by default since 1.31)
// with its reason, and the critical pod admission handler's reason and words for a pod it preempts.

/** v1.DisruptionTarget. */
export const DISRUPTION_TARGET = 'DisruptionTarget';
/** v1.PodReasonTerminationByKubelet: the condition's reason for every stop the kubelet itself decides. */
export const TERMINATION_BY_KUBELET = 'TerminationByKubelet';

/** events.PreemptContainer: the event's reason and the preempted pod's status reason. */
export const PREEMPTING = 'Preempting';
/** The preempted pod's status message (and its event's). */
export const PREEMPTED_MESSAGE = 'Preempted in order to admit critical pod';
/** The preempted pod's DisruptionTarget message. */
export const PREEMPTED_CONDITION_MESSAGE = 'Pod was preempted by Kubelet to accommodate a critical pod.';
