// The kubelet-owned pod conditions (pkg/kubelet/status/generate.go), in the order the kubelet
// writes them, with lastTransitionTime kept from the previous status while a condition's status
// does not change.
import type { ContainerStatus, Pod, PodCondition } from 'kubernetes-types/core/v1';
import { PodSandboxState } from '../cri/cri-types.js';
import type { RuntimePod } from '../kuberuntime/runtime-pods.js';
import type { PodPhase } from './phase.js';
import { isRestartableInit } from '../k8s/restart.js';
import { apiTime } from '../util/api-time.js';
import { observedGenerationOf } from '../k8s/pod-generation.js';
import { DISRUPTION_TARGET } from '../k8s/disruption.js';
import { KUBELET_CONDITIONS } from '../k8s/pod-conditions.js';

type Status = 'True' | 'False';

function cond(type: string, status: Status, reason?: string, message?: string): PodCondition {
  const c: PodCondition = { type, status };
  if (reason) c.reason = reason;
  if (message) c.message = message;
  return c;
}

/** Go's fmt of a []string: `[a b]`. The messages are read by people used to the kubelet's. */
const goList = (names: string[]): string => `[${names.join(' ')}]`;

/** The newest sandbox is ready and would not be replaced (PodSandboxChanged says no). */
function readyToStartContainers(pod: Pod, runtime: RuntimePod | undefined): PodCondition {
  const sandboxes = runtime?.sandboxes ?? [];
  const newest = sandboxes[0];
  const readyCount = sandboxes.filter((s) => s.state === PodSandboxState.SANDBOX_READY).length;
  const ok =
    !!newest &&
    newest.state === PodSandboxState.SANDBOX_READY &&
    readyCount <= 1 &&
    (pod.spec?.hostNetwork === true || newest.ip !== '');
  return cond('PodReadyToStartContainers', ok ? 'True' : 'False');
}

function initialized(pod: Pod, statuses: readonly ContainerStatus[], phase: PodPhase): PodCondition {
  const inits = pod.spec?.initContainers ?? [];
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const c of inits) {
    const s = byName.get(c.name);
    if (!s) unknown.push(c.name);
    else if (isRestartableInit(c) ? s.started !== true : !s.ready) incomplete.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return cond('Initialized', 'True', 'PodCompleted');
  // A regular container that has run means initialization was done, even if a sidecar restarts now.
  const regular = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  if (statuses.some((s) => regular.has(s.name) && (s.state?.running || s.state?.terminated)))
    return cond('Initialized', 'True');
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (incomplete.length > 0) messages.push(`containers with incomplete status: ${goList(incomplete)}`);
  if (messages.length > 0) return cond('Initialized', 'False', 'ContainersNotInitialized', messages.join(', '));
  return cond('Initialized', 'True');
}

function containersReady(pod: Pod, statuses: readonly ContainerStatus[], phase: PodPhase): PodCondition {
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const unknown: string[] = [];
  const unready: string[] = [];
  const counted = [...(pod.spec?.initContainers ?? []).filter(isRestartableInit), ...(pod.spec?.containers ?? [])];
  for (const c of counted) {
    const s = byName.get(c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0) return cond('ContainersReady', 'False', 'PodCompleted');
  if (phase === 'Failed') return cond('ContainersReady', 'False', 'PodFailed');
  const messages: string[] = [];
  if (unknown.length > 0) messages.push(`containers with unknown status: ${goList(unknown)}`);
  if (unready.length > 0) messages.push(`containers with unready status: ${goList(unready)}`);
  if (messages.length > 0) return cond('ContainersReady', 'False', 'ContainersNotReady', messages.join(', '));
  return cond('ContainersReady', 'True');
}

function podReady(pod: Pod, containers: PodCondition, others: readonly PodCondition[]): PodCondition {
  if (containers.status !== 'True')
    return cond('Ready', containers.status as Status, containers.reason, containers.message);
  const messages: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = others.find((o) => o.type === gate.conditionType);
    if (!c)
      messages.push(
        `corresponding condition of pod readiness gate ${JSON.stringify(gate.conditionType)} does not exist.`,
      );
    else if (c.status !== 'True')
      messages.push(
        `the status of pod readiness gate ${JSON.stringify(gate.conditionType)} is not "True", but ${c.status}`,
      );
  }
  if (messages.length > 0) return cond('Ready', 'False', 'ReadinessGatesNotReady', messages.join(', '));
  return cond('Ready', 'True');
}

/** A condition keeps the time it last changed status; a new or changed one gets `now`. */
export function withTransitionTimes(
  conditions: PodCondition[],
  previous: readonly PodCondition[] | undefined,
  now: Date,
): PodCondition[] {
  return conditions.map((c) => {
    const old = previous?.find((p) => p.type === c.type);
    const lastTransitionTime =
      old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : apiTime(now);
    return { ...c, lastTransitionTime };
  });
}

/**
 * Conditions computed since the agent started take the time the API server showed for the same
 * type and status before it (the kubelet's status manager keeps the API's times for a pod it has
 * not cached), so a restart restamps nothing and sends no patch for it.
 */
export function withReportedTransitionTimes(
  conditions: readonly PodCondition[],
  reported: readonly PodCondition[] | undefined,
): PodCondition[] {
  return conditions.map((c) => {
    const old = reported?.find((r) => r.type === c.type);
    return old && old.status === c.status && old.lastTransitionTime
      ? { ...c, lastTransitionTime: old.lastTransitionTime }
      : c;
  });
}

export interface ConditionsInput {
  readonly pod: Pod;
  readonly runtime: RuntimePod | undefined;
  /** Init statuses then regular ones. */
  readonly statuses: readonly ContainerStatus[];
  readonly phase: PodPhase;
  readonly previous: readonly PodCondition[] | undefined;
  readonly now: Date;
}

export function podConditions(input: ConditionsInput): PodCondition[] {
  const { pod, statuses, phase } = input;
  // Each condition the kubelet sets carries the generation it was set for, even when its status stays.
  const observedGeneration = observedGenerationOf(pod);
  // Conditions the kubelet does not own (readiness gates set by others) come from the API's copy of
  // the pod (generateAPIPodStatus); the DisruptionTarget set here when stopping it is kept from before.
  const foreign = (pod.status?.conditions ?? []).filter((c) => !KUBELET_CONDITIONS.has(c.type));
  const ownDisruption = input.previous?.find((c) => c.type === DISRUPTION_TARGET);
  if (ownDisruption && !foreign.some((c) => c.type === DISRUPTION_TARGET)) foreign.push(ownDisruption);
  const cr = containersReady(pod, statuses, phase);
  const generated = [
    readyToStartContainers(pod, input.runtime),
    initialized(pod, statuses, phase),
    podReady(pod, cr, foreign),
    cr,
    cond('PodScheduled', 'True'),
  ];
  const stamped = observedGeneration ? generated.map((c) => ({ ...c, observedGeneration })) : generated;
  return [...foreign, ...withTransitionTimes(stamped, input.previous, input.now)];
}
