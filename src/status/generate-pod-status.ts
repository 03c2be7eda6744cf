// The v1 PodStatus of one static pod, computed from what the runtime runs, what the probes say
// and what the last sync could not do (generateAPIPodStatus in kubelet_pods.go). Pure: the same
// input gives the same status, so it is tested as a table.
import type { ContainerStatus, PodStatus } from 'kubernetes-types/core/v1';
import { qosClass } from '../k8s/qos.js';
import { podConditions, withTransitionTimes } from './conditions.js';
import { addContainerResources, resizeConditions } from './resize-status.js';
import { containerStatuses } from './container-statuses.js';
import { podPhase } from './phase.js';
import { isTerminalPhase } from '../k8s/pod-phase.js';
import { podAddresses } from './pod-ips.js';
import { applyProbeResults } from './readiness.js';
import { podStartTime } from './start-time.js';
import type { GenerateInput } from './types.js';
import { observedGenerationOf } from '../k8s/pod-generation.js';

const NONE = new Map<string, never>();

/** A regular container exists in the current sandbox: the pod got past its init containers there. */
function hasInitializedInCurrentSandbox(input: GenerateInput): boolean {
  const sandbox = input.runtime?.sandboxes[0];
  if (!sandbox) return false;
  const regular = new Set((input.pod.spec?.containers ?? []).map((c) => c.name));
  return (input.runtime?.containers ?? []).some((c) => c.sandboxId === sandbox.id && regular.has(c.name));
}

export function generatePodStatus(input: GenerateInput): PodStatus {
  const { pod, previous } = input;
  const uid = pod.metadata.uid;
  const common = {
    pod,
    runtime: input.runtime,
    waiting: input.waiting,
    runtimeName: input.runtimeName,
    terminating: input.terminating === true,
    terminationMessages: input.terminationMessages ?? NONE,
  };
  const initSpecs = pod.spec?.initContainers ?? [];
  const specs = pod.spec?.containers ?? [];
  const initStatuses = containerStatuses({
    ...common,
    specs: initSpecs,
    isInit: true,
    previous: previous?.initContainerStatuses,
  });
  const regularStatuses = containerStatuses({ ...common, specs, isInit: false, previous: previous?.containerStatuses });
  // Ephemeral containers have no probes and count for neither the phase nor readiness.
  const ephemeralSpecs = pod.spec?.ephemeralContainers ?? [];
  const ephemeralStatuses =
    ephemeralSpecs.length > 0
      ? containerStatuses({
          ...common,
          specs: ephemeralSpecs,
          isInit: false,
          previous: previous?.ephemeralContainerStatuses,
        })
      : undefined;
  const reported = input.reported;
  applyProbeResults(uid, initSpecs, initStatuses, input.probes, true, reported?.initContainerStatuses);
  applyProbeResults(uid, specs, regularStatuses, input.probes, false, reported?.containerStatuses);

  const all: ContainerStatus[] = [...initStatuses, ...regularStatuses];
  let phase = podPhase(pod, all, hasInitializedInCurrentSandbox(input));
  // The worker gave up on the pod for good; nothing will run again.
  if (input.podFailed && !isTerminalPhase(phase)) phase = 'Failed';
  // A pod never leaves Succeeded or Failed once it has been reported so.
  const prevPhase = previous?.phase;
  if (!isTerminalPhase(phase) && isTerminalPhase(prevPhase)) phase = prevPhase;

  addContainerResources(initSpecs, initStatuses, input.runtime, true);
  addContainerResources(specs, regularStatuses, input.runtime, false);
  const observedGeneration = observedGenerationOf(pod);
  const status: PodStatus = {
    ...(observedGeneration ? { observedGeneration } : {}),
    phase,
    conditions: [
      ...podConditions({
        pod,
        runtime: input.runtime,
        statuses: all,
        phase,
        previous: previous?.conditions,
        now: input.now,
      }),
      ...withTransitionTimes(resizeConditions(pod, input.runtime, input.resize), previous?.conditions, input.now),
    ],
    ...podAddresses(pod, input.runtime, input.nodeIP, previous),
    startTime: podStartTime(pod, input.runtime, previous, input.now),
    qosClass: qosClass(pod),
  };
  // Reason and message belong to a phase: kept while it does not change.
  if (previous && previous.phase === phase) {
    if (previous.reason) status.reason = previous.reason;
    if (previous.message) status.message = previous.message;
  }
  if (initSpecs.length > 0) status.initContainerStatuses = initStatuses;
  status.containerStatuses = regularStatuses;
  if (ephemeralStatuses) status.ephemeralContainerStatuses = ephemeralStatuses;
  return status;
}
