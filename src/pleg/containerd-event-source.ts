// containerd's own task events (for containerd without CRI GetContainerEvents, i.e. 1.6): an event
// only says that a task started, exited or was deleted, and containerd publishes /tasks/exit before
// its CRI plugin records the container as exited. So an event does not update the record itself; it
// asks the relist PLEG for an immediate relist that is followed up until the CRI shows the change.
import type { ContainerdEventsClient, ContainerdTaskEvent } from '../cri/containerd-events.js';
import type { RelistPleg } from './relist-pleg.js';
import type { StreamCallbacks, StreamHandle } from './stream-supervisor.js';

/** What one task event means for the PLEG. */
export function handleTaskEvent(pleg: RelistPleg, e: ContainerdTaskEvent): void {
  switch (e.topic) {
    case '/tasks/oom':
      // Recorded for the ContainerDied that follows; the death itself comes as /tasks/exit.
      pleg.markOomKilled(e.containerId);
      return;
    case '/tasks/start':
      pleg.requestRelist({ id: e.containerId, running: true });
      return;
    case '/tasks/exit':
    case '/tasks/delete':
      // An exec's process (an exec probe, kubectl exec) ending is not the container's.
      if (e.processId !== '' && e.processId !== e.containerId) return;
      pleg.requestRelist({ id: e.containerId, running: false });
      return;
  }
}

export function openContainerdEventStream(
  client: Pick<ContainerdEventsClient, 'subscribeTaskEvents'>,
  pleg: RelistPleg,
): (cb: StreamCallbacks) => StreamHandle {
  return (cb) =>
    client.subscribeTaskEvents(
      (e) => {
        cb.onMessage();
        handleTaskEvent(pleg, e);
      },
      (err) => cb.onEnd(err && { unsupported: err.unimplemented, message: err.message }),
    );
}
