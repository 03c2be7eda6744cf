// CRI GetContainerEvents (containerd >= 1.7, CRI-O with events): each event carries the pod's
// sandbox status and its containers' statuses as the runtime already recorded them, so it updates
// the PLEG's record of that one object at once, without a relist.
import { ContainerEventType, type ContainerEventResponse, type ContainerStatus, type RuntimeService } from '../runtime/cri-types.js';
import { parseContainerMeta, parseSandboxLabels } from '../runtime/labels.js';
import type { RelistPleg } from './relist-pleg.js';
import type { StreamCallbacks, StreamHandle } from './stream-supervisor.js';

const UNIMPLEMENTED = 12;

function podUidOf(e: ContainerEventResponse, status: ContainerStatus | undefined): string | undefined {
  const fromContainer = status && parseContainerMeta(status.labels, status.annotations)?.podUid;
  return fromContainer ?? (e.podSandboxStatus && parseSandboxLabels(e.podSandboxStatus.labels)?.podUid);
}

/** Applies one CRI container event to the record; asks for a relist when it cannot be read. */
export function applyContainerEvent(pleg: RelistPleg, e: ContainerEventResponse): void {
  const sandbox = e.podSandboxStatus;
  if (e.containerEventType === ContainerEventType.CONTAINER_DELETED_EVENT) {
    pleg.remove(e.containerId);
    return;
  }
  if (sandbox && sandbox.id === e.containerId) {
    const podUid = parseSandboxLabels(sandbox.labels)?.podUid;
    if (podUid) pleg.apply({ kind: 'sandbox', id: sandbox.id, podUid, state: sandbox.state });
    return;
  }
  const status = e.containersStatuses.find((c) => c.id === e.containerId);
  const podUid = podUidOf(e, status);
  const name = status && parseContainerMeta(status.labels, status.annotations)?.containerName;
  if (status && podUid && name) pleg.apply({ kind: 'container', id: status.id, podUid, name, state: status.state });
  // An event without the container's status (a runtime that sends only ids): read it by relisting.
  else if (!status) pleg.requestRelist();
  // With a status but no kubelet labels: not a pod of ours, as a relist would ignore it.
}

export function openCriEventStream(runtime: RuntimeService, pleg: RelistPleg): (cb: StreamCallbacks) => StreamHandle {
  return (cb) =>
    runtime.getContainerEvents(
      (e) => {
        cb.onMessage();
        applyContainerEvent(pleg, e);
      },
      (err) => cb.onEnd(err && { unsupported: err.code === UNIMPLEMENTED, message: err.message }),
    );
}
