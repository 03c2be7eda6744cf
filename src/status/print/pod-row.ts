// One row of `kubectl get pods` for a pod, computed as kubectl's pod printer does
// (printPod in pkg/printers/internalversion/printers.go): READY counts ready app containers and
// sidecars, STATUS is the most telling container reason, RESTARTS says when the last one was.
import type { ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import { ageSince } from './human-duration.js';
import { isTerminalPhase } from '../../k8s/pod-phase.js';
import { restartableInitContainers } from '../../k8s/restart.js';

export interface PodRow {
  readonly namespace: string;
  readonly name: string;
  readonly ready: string;
  readonly status: string;
  readonly restarts: string;
  readonly age: string;
  readonly ip: string;
  readonly node: string;
}

const laterOf = (a: string | undefined, b: string | undefined): string | undefined =>
  !a || (b && Date.parse(b) > Date.parse(a)) ? b : a;

function terminatedReason(t: NonNullable<NonNullable<ContainerStatus['state']>['terminated']>, prefix: string): string {
  if (t.reason) return prefix + t.reason;
  return t.signal ? `${prefix}Signal:${t.signal}` : `${prefix}ExitCode:${t.exitCode}`;
}

interface Tally {
  reason: string;
  ready: number;
  restarts: number;
  lastRestart?: string;
}

/** Walks init containers; returns true while the pod is still initializing (reason set). */
function tallyInit(pod: Pod, t: Tally, sidecar: { restarts: number; lastRestart?: string }): boolean {
  const specs = pod.spec?.initContainers ?? [];
  const restartable = new Set(restartableInitContainers(specs).map((c) => c.name));
  const statuses = pod.status?.initContainerStatuses ?? [];
  for (let i = 0; i < statuses.length; i++) {
    const s = statuses[i]!;
    t.restarts += s.restartCount;
    const finished = s.lastState?.terminated?.finishedAt;
    t.lastRestart = laterOf(t.lastRestart, finished);
    if (restartable.has(s.name)) {
      sidecar.restarts += s.restartCount;
      sidecar.lastRestart = laterOf(sidecar.lastRestart, finished);
    }
    if (s.state?.terminated && s.state.terminated.exitCode === 0) continue;
    if (restartable.has(s.name) && s.started === true) {
      if (s.ready) t.ready++;
      continue;
    }
    if (s.state?.terminated) t.reason = terminatedReason(s.state.terminated, 'Init:');
    else if (s.state?.waiting?.reason && s.state.waiting.reason !== 'PodInitializing')
      t.reason = `Init:${s.state.waiting.reason}`;
    else t.reason = `Init:${i}/${specs.length}`;
    return true;
  }
  return false;
}

function tallyContainers(pod: Pod, t: Tally): void {
  const statuses = pod.status?.containerStatuses ?? [];
  let hasRunning = false;
  // Backwards, so that the first container's reason wins, as in kubectl.
  for (let i = statuses.length - 1; i >= 0; i--) {
    const s = statuses[i]!;
    t.restarts += s.restartCount;
    t.lastRestart = laterOf(t.lastRestart, s.lastState?.terminated?.finishedAt);
    if (s.state?.waiting?.reason) t.reason = s.state.waiting.reason;
    else if (s.state?.terminated) t.reason = terminatedReason(s.state.terminated, '');
    else if (s.ready && s.state?.running) {
      hasRunning = true;
      t.ready++;
    }
  }
  if (t.reason === 'Completed' && hasRunning) {
    const ready = (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    t.reason = ready ? 'Running' : 'NotReady';
  }
}

export function podRow(pod: Pod, nowMs: number): PodRow {
  const status = pod.status ?? {};
  const phase = status.phase ?? '';
  const t: Tally = { reason: status.reason || phase, ready: 0, restarts: 0 };
  const sidecar: { restarts: number; lastRestart?: string } = { restarts: 0 };
  const initializing = tallyInit(pod, t, sidecar);
  const initialized = (status.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    // Once initialized, only sidecar restarts are counted among the init containers'.
    t.restarts = sidecar.restarts;
    t.lastRestart = sidecar.lastRestart;
    tallyContainers(pod, t);
  }
  if (pod.metadata?.deletionTimestamp && !isTerminalPhase(phase)) t.reason = 'Terminating';

  const total = (pod.spec?.containers ?? []).length + restartableInitContainers(pod.spec?.initContainers).length;
  const restarts =
    t.restarts !== 0 && t.lastRestart ? `${t.restarts} (${ageSince(t.lastRestart, nowMs)} ago)` : String(t.restarts);
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    ready: `${t.ready}/${total}`,
    status: t.reason,
    restarts,
    // Static pods read from files carry no creationTimestamp; their start time is their age.
    age: ageSince(pod.metadata?.creationTimestamp ?? status.startTime, nowMs),
    ip: status.podIPs?.[0]?.ip || '<none>',
    node: pod.spec?.nodeName || '<none>',
  };
}
