// containerStatuses / initContainerStatuses (convertToAPIContainerStatuses in kubelet_pods.go):
// the newest runtime instance of each container gives `state`, the one before it `lastState`;
// a container the last sync could not (re)start shows why it waits.
import type { Container, ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import { ContainerState } from '../cri/cri-types.js';
import { instancesByName, type RuntimeContainer, type RuntimePod } from '../kuberuntime/runtime-pods.js';
import { CONTAINER_STATUS_UNKNOWN, convertRuntimeContainer } from './container-state.js';
import { shouldBeRestarted } from './restart-rules.js';
import type { WaitingReason } from './types.js';

export const CONTAINER_CREATING = 'ContainerCreating';
export const POD_INITIALIZING = 'PodInitializing';

export interface ContainerStatusesInput {
  readonly pod: Pod;
  readonly specs: readonly Container[];
  readonly isInit: boolean;
  readonly runtime: RuntimePod | undefined;
  readonly previous: readonly ContainerStatus[] | undefined;
  readonly waiting: ReadonlyMap<string, WaitingReason>;
  readonly runtimeName: string;
  readonly terminating: boolean;
  readonly terminationMessages: ReadonlyMap<string, string>;
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Before any instance exists: what the pod is waiting for. */
function defaultStatus(spec: Container, hasInitContainers: boolean, old: ContainerStatus | undefined): ContainerStatus {
  // A container that ended stays reported as ended even once the runtime has removed it.
  if (old?.state?.terminated) return clone(old);
  return {
    name: spec.name,
    image: spec.image ?? '',
    imageID: '',
    ready: false,
    restartCount: old?.restartCount ?? 0,
    state: { waiting: { reason: hasInitContainers ? POD_INITIALIZING : CONTAINER_CREATING } },
    lastState: old?.lastState ? clone(old.lastState) : {},
  };
}

/**
 * A container that was running and has vanished without an exit record ended in a way nobody
 * saw. Saying so (lastState terminated, 137) keeps the pod from falling back to Pending.
 */
function markVanished(status: ContainerStatus, old: ContainerStatus | undefined, terminating: boolean): void {
  if (!old?.state?.running || status.lastState?.terminated) return;
  status.lastState = {
    terminated: {
      reason: CONTAINER_STATUS_UNKNOWN,
      message: 'The container could not be located when the pod was deleted.  The container used to be Running',
      exitCode: 137,
    },
  };
  if (!terminating) status.restartCount += 1;
}

export function containerStatuses(input: ContainerStatusesInput): ContainerStatus[] {
  const hasInitContainers = (input.pod.spec?.initContainers ?? []).length > 0;
  const oldByName = new Map((input.previous ?? []).map((s) => [s.name, s]));
  const instances = instancesByName(input.runtime?.containers ?? []);
  const out: ContainerStatus[] = [];

  for (const spec of input.specs) {
    const old = oldByName.get(spec.name);
    const [newest, prior] = instances.get(spec.name) ?? [];
    let status: ContainerStatus;
    if (newest) {
      const convert = (c: RuntimeContainer): ContainerStatus =>
        convertRuntimeContainer(c, {
          specImage: spec.image ?? '',
          runtimeName: input.runtimeName,
          old,
          terminationMessage: input.terminationMessages.get(c.id),
        });
      status = convert(newest);
      if (prior) status.lastState = convert(prior).state ?? {};
    } else {
      status = defaultStatus(spec, hasInitContainers, old);
      if (status.state?.waiting) markVanished(status, old, input.terminating);
    }

    const why = input.waiting.get(spec.name);
    const initDone = input.isInit && newest?.state === ContainerState.CONTAINER_EXITED && newest.exitCode === 0;
    if (why && !initDone && shouldBeRestarted(input.pod, spec, newest, input.terminating)) {
      if (status.state?.terminated) status.lastState = status.state;
      status.state = { waiting: { reason: why.reason, message: why.message } };
    }
    out.push(status);
  }
  // Init containers keep spec order (their order is their meaning); the others sort by name.
  if (!input.isInit) out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out;
}
