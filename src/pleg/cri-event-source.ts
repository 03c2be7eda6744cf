// CRI GetContainerEvents (containerd >= 1.7, CRI-O with events): each event names the pod it is
// about (its sandbox's or container's labels), so only that pod is read again, at once.
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

/** Reads again the pod one CRI container event is about; relists when it names none. */
export function applyContainerEvent(pleg: RelistPleg, e: ContainerEventResponse): void {
  const sandbox = e.podSandboxStatus;
  const status = e.containersStatuses.find((c) => c.id === e.containerId);
  const podUid = podUidOf(e, status) ?? (sandbox && parseSandboxLabels(sandbox.labels)?.podUid);
  if (podUid) pleg.refreshPod(podUid);
  // An event that names no pod of ours: a deletion carries no status; read everything.
  else if (!status || e.containerEventType === ContainerEventType.CONTAINER_DELETED_EVENT)
    pleg.requestRelist({ id: e.containerId, running: false });
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
