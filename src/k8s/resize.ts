// In-place pod resize (KEP-1287, GA in 1.35): which containers and resources a resize may change,
// the resize policy of a container (absent: NotRequired, as the kubelet reads it; the API server
// defaults none), and the conditions and words the kubelet reports a resize with.
import type { Container } from 'kubernetes-types/core/v1';

/** The resources a resize may change. */
export type ResizableResource = 'cpu' | 'memory';
export const RESIZABLE_RESOURCES: readonly ResizableResource[] = ['cpu', 'memory'];

export type ResizeRestartPolicy = 'NotRequired' | 'RestartContainer';

/** The container's policy for a resource; NotRequired where it names none. */
export function resizeRestartPolicy(c: Container, resource: ResizableResource): ResizeRestartPolicy {
  const p = c.resizePolicy?.find((r) => r.resourceName === resource)?.restartPolicy;
  return p === 'RestartContainer' ? 'RestartContainer' : 'NotRequired';
}

/** Regular containers and sidecars (restartable init containers) are resized; other init containers are not. */
export function isResizableContainer(c: Container, isInit: boolean): boolean {
  return !isInit || c.restartPolicy === 'Always';
}

/** Pod condition types. */
export const POD_RESIZE_PENDING = 'PodResizePending';
export const POD_RESIZE_IN_PROGRESS = 'PodResizeInProgress';

/** PodResizePending reasons: not now (the node is full), or never on this node. */
export type ResizePendingReason = 'Deferred' | 'Infeasible';
/** PodResizeInProgress's reason when applying the resize failed. */
export const RESIZE_ERROR_REASON = 'Error';

/** The kubelet's message for a pod from a manifest (a manifest change is a new pod there). */
export const STATIC_POD_RESIZE_INFEASIBLE = 'In-place resize of static-pods is not supported';

/** The Infeasible message: the pod alone asks for more than the node's allocatable. */
export function capacityMessage(resource: ResizableResource, requested: number, capacity: number): string {
  return `Node didn't have enough capacity: ${resource}, requested: ${requested}, capacity: ${capacity}`;
}

/** The Killing message of a container its policy restarts for a resize. */
export function resizeRestartMessage(containerName: string): string {
  return `Container ${containerName} resize requires restart`;
}
