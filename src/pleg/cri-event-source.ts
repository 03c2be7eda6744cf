// CRI GetContainerEvents (containerd >= 2.0, CRI-O with events). The runtime sends one when its CRI
// state has changed (containerd's CRI plugin records an exit before it sends CONTAINER_STOPPED), so
// an event is confirmed by one read of the object it names, as the PLEG reads after a containerd
// task event (RelistPleg.requestRelist): the agent's own creations and stops are read once, by the
// creation and the stop, not again for their events; an object the cache does not know is read with
// the pod the event names (a list filtered by its UID), or by a full relist when it names none.
import {
  ContainerEventType,
  type ContainerEventResponse,
  type ContainerStatus,
  type RuntimeService,
} from '../cri/cri-types.js';
import { parseContainerMeta, parseSandboxLabels } from '../kuberuntime/labels.js';
import type { RelistPleg } from './relist-pleg.js';
import type { StreamCallbacks, StreamHandle } from './stream-supervisor.js';

const UNIMPLEMENTED = 12;

function podUidOf(e: ContainerEventResponse, status: ContainerStatus | undefined): string | undefined {
  const fromContainer = status && parseContainerMeta(status.labels, status.annotations)?.podUid;
  return fromContainer ?? (e.podSandboxStatus ? parseSandboxLabels(e.podSandboxStatus.labels)?.podUid : undefined);
}

/** What one CRI container (or sandbox) event asks of the PLEG. */
export function applyContainerEvent(pleg: RelistPleg, e: ContainerEventResponse): void {
  const status = e.containersStatuses.find((c) => c.id === e.containerId);
  const pod = podUidOf(e, status);
  switch (e.containerEventType) {
    // Nothing runs yet: the agent's own creation is read with its answer, a stranger's object is
    // seen by the next relist (as containerd's /tasks/create is not listened to).
    case ContainerEventType.CONTAINER_CREATED_EVENT:
      return;
    case ContainerEventType.CONTAINER_STARTED_EVENT:
      pleg.requestRelist({ id: e.containerId, running: true }, pod);
      return;
    case ContainerEventType.CONTAINER_STOPPED_EVENT:
    case ContainerEventType.CONTAINER_DELETED_EVENT:
      pleg.requestRelist({ id: e.containerId, running: false }, pod);
      return;
    default:
      // A kind this client does not know: read what it may be about.
      if (pod) pleg.refreshPod(pod);
      else pleg.requestRelist();
  }
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
