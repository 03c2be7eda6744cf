// `started` and `ready` of each container (the prober manager's UpdatePodStatus): a container
// without a startup probe is started once running; without a readiness probe it is ready once
// started. A regular init container is "ready" when it has completed successfully. A container
// found running at the agent's start whose probe has no result yet keeps the `started` and `ready`
// reported for that very container before the restart (KEP-4781: the kubelet of 1.35 and later
// with ChangeContainerStatusOnKubeletRestart off, its default), so a restart flips nothing.
import type { Container, ContainerStatus } from 'kubernetes-types/core/v1';
import { isRestartableInit } from '../k8s/restart.js';
import type { ProbeState } from './types.js';

function startedOf(
  uid: string,
  spec: Container,
  s: ContainerStatus,
  probes: ProbeState,
  before: ContainerStatus | undefined,
): boolean {
  if (!s.state?.running) return false;
  if (!spec.startupProbe) return true;
  // A startup probe that has not answered yet means "not started", unless it had passed before the restart.
  return probes.started(uid, spec.name) ?? before?.started === true;
}

function readyOf(
  uid: string,
  spec: Container,
  s: ContainerStatus,
  probes: ProbeState,
  started: boolean,
  before: ContainerStatus | undefined,
): boolean {
  if (!started || !s.state?.running) return false;
  if (!spec.readinessProbe) return true;
  return probes.ready(uid, spec.name) ?? before?.ready === true;
}

/**
 * `reported`: the container statuses the API had for the pod before the restart; only an entry of
 * the same container (same containerID) counts.
 */
export function applyProbeResults(
  uid: string,
  specs: readonly Container[],
  statuses: ContainerStatus[],
  probes: ProbeState,
  isInit: boolean,
  reported: readonly ContainerStatus[] = [],
): void {
  const byName = new Map(specs.map((c) => [c.name, c]));
  for (const s of statuses) {
    const spec = byName.get(s.name);
    if (!spec) continue;
    const before = s.containerID
      ? reported.find((r) => r.name === s.name && r.containerID === s.containerID)
      : undefined;
    const started = startedOf(uid, spec, s, probes, before);
    s.started = started;
    if (isInit && !isRestartableInit(spec)) {
      s.ready = s.state?.terminated?.exitCode === 0;
      continue;
    }
    s.ready = readyOf(uid, spec, s, probes, started, before);
  }
}
