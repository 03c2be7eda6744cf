// `started` and `ready` of each container (the prober manager's UpdatePodStatus): a container
// without a startup probe is started once running; without a readiness probe it is ready once
// started. A regular init container is "ready" when it has completed successfully.
import type { Container, ContainerStatus } from 'kubernetes-types/core/v1';
import { isRestartableInit } from '../k8s/restart.js';
import type { ProbeState } from './types.js';

function startedOf(uid: string, spec: Container, s: ContainerStatus, probes: ProbeState): boolean {
  if (!s.state?.running) return false;
  // A startup probe that has not answered yet means "not started".
  return spec.startupProbe ? probes.started(uid, spec.name) === true : true;
}

function readyOf(uid: string, spec: Container, s: ContainerStatus, probes: ProbeState, started: boolean): boolean {
  if (!started || !s.state?.running) return false;
  return spec.readinessProbe ? probes.ready(uid, spec.name) === true : true;
}

export function applyProbeResults(
  uid: string,
  specs: readonly Container[],
  statuses: ContainerStatus[],
  probes: ProbeState,
  isInit: boolean,
): void {
  const byName = new Map(specs.map((c) => [c.name, c]));
  for (const s of statuses) {
    const spec = byName.get(s.name);
    if (!spec) continue;
    const started = startedOf(uid, spec, s, probes);
    s.started = started;
    if (isInit && !isRestartableInit(spec)) {
      s.ready = s.state?.terminated?.exitCode === 0;
      continue;
    }
    s.ready = readyOf(uid, spec, s, probes, started);
  }
}
