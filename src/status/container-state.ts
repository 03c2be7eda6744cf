// One runtime container instance as a v1 ContainerStatus (convertContainerStatus in
// kubelet_pods.go): state from the CRI state, ids with the runtime's scheme, restart count from
// the annotation the kubelet wrote when it created the instance.
import type {
  ContainerState as ApiContainerState,
  ContainerStateTerminated,
  ContainerStatus,
} from 'kubernetes-types/core/v1';
import { ContainerState } from '../cri/cri-types.js';
import type { RuntimeContainer } from '../kuberuntime/runtime-pods.js';
import { apiTimeFromNs } from '../util/api-time.js';

export const CONTAINER_STATUS_UNKNOWN = 'ContainerStatusUnknown';

/** The kubelet joins the runtime's message and the container's own termination message with ": ". */
function terminatedMessage(c: RuntimeContainer, termination: string | undefined): string | undefined {
  const parts = [c.message, termination].filter((s): s is string => !!s);
  return parts.length > 0 ? parts.join(': ') : undefined;
}

function terminated(
  c: RuntimeContainer,
  containerID: string,
  termination: string | undefined,
): ContainerStateTerminated {
  const t: ContainerStateTerminated = { exitCode: c.exitCode, containerID };
  if (c.reason) t.reason = c.reason;
  const message = terminatedMessage(c, termination);
  if (message) t.message = message;
  const startedAt = apiTimeFromNs(c.startedAt);
  if (startedAt) t.startedAt = startedAt;
  const finishedAt = apiTimeFromNs(c.finishedAt);
  if (finishedAt) t.finishedAt = finishedAt;
  return t;
}

export interface ConvertOptions {
  readonly specImage: string;
  readonly runtimeName: string;
  /** The status reported last time for this container name, if any. */
  readonly old: ContainerStatus | undefined;
  readonly terminationMessage: string | undefined;
}

export function convertRuntimeContainer(c: RuntimeContainer, o: ConvertOptions): ContainerStatus {
  const containerID = `${o.runtimeName}://${c.id}`;
  const status: ContainerStatus = {
    name: c.name,
    restartCount: c.meta.restartCount,
    image: o.specImage,
    imageID: c.imageRef,
    containerID,
    ready: false,
    lastState: {},
  };
  // As the runtime reports it (a runtime with the SupplementalGroupsPolicy feature): KEP-3619.
  if (c.user) {
    const { uid, gid, supplementalGroups } = c.user;
    status.user = {
      linux: { uid, gid, ...(supplementalGroups.length > 0 ? { supplementalGroups: [...supplementalGroups] } : {}) },
    };
  }
  let state: ApiContainerState;
  switch (c.state) {
    case ContainerState.CONTAINER_RUNNING:
      state = { running: { startedAt: apiTimeFromNs(c.startedAt) } };
      break;
    case ContainerState.CONTAINER_CREATED:
      // Created but not started: "waiting to be running", with no reason of its own.
      state = { waiting: {} };
      break;
    case ContainerState.CONTAINER_EXITED:
      state = { terminated: terminated(c, containerID, o.terminationMessage) };
      break;
    default:
      if (o.old?.state?.running) {
        // It was running and the runtime lost track of it: it did not "never run", it ended unseen.
        state = {
          terminated: {
            reason: CONTAINER_STATUS_UNKNOWN,
            message: 'The container could not be located when the pod was terminated',
            exitCode: 137,
          },
        };
        status.restartCount = o.old.restartCount + 1;
      } else {
        state = { waiting: {} };
      }
  }
  status.state = state;
  return status;
}
