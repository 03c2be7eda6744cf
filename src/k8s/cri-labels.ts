// The label and annotation keys the kubelet writes on CRI sandboxes and containers
// (kuberuntime/labels.go), plus bootlet's own fingerprint. The codec that writes and reads them
// is kuberuntime/labels.ts; crictl, log shippers and a restarted agent read the same keys.

export const POD_NAME_LABEL = 'io.kubernetes.pod.name';
export const POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';

export const POD_DELETION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.deletionGracePeriod';
export const POD_TERMINATION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.terminationGracePeriod';
export const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';
export const CONTAINER_HASH_WITHOUT_RESOURCES_ANNOTATION = 'io.kubernetes.container.hashWithoutResources';
export const CONTAINER_RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';
export const CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION = 'io.kubernetes.container.terminationMessagePath';
export const CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION = 'io.kubernetes.container.terminationMessagePolicy';
export const CONTAINER_PRESTOP_HANDLER_ANNOTATION = 'io.kubernetes.container.preStopHandler';
export const CONTAINER_PORTS_ANNOTATION = 'io.kubernetes.container.ports';
export const CONTAINER_TYPE_ANNOTATION = 'io.kubernetes.container.type';
/** bootlet's whole-spec fingerprint; its presence also marks a container bootlet made. */
export const BOOTLET_CONTAINER_HASH_ANNOTATION = 'bootlet.io/container.hash';
/**
 * The mirror pod's `kubectl.kubernetes.io/restartedAt` the container was started under: the record,
 * kept in the runtime, that a restart asked through the API was done (and not to be done again).
 */
export const BOOTLET_RESTARTED_AT_ANNOTATION = 'bootlet.io/restartedAt';
