// /metrics in the Prometheus text format, with kubelet metric names where the meaning is the
// same, so that existing dashboards and alerts work unchanged.
import { ContainerState, PodSandboxState } from '../runtime/cri-types.js';
import type { ServerSource } from './source.js';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const CONTAINER_STATE_LABEL: Record<ContainerState, string> = {
  [ContainerState.CONTAINER_CREATED]: 'created',
  [ContainerState.CONTAINER_RUNNING]: 'running',
  [ContainerState.CONTAINER_EXITED]: 'exited',
  [ContainerState.CONTAINER_UNKNOWN]: 'unknown',
};

function gauge(name: string, help: string, samples: ReadonlyArray<{ labels?: string; value: number }>, type = 'gauge'): string {
  const lines = [`# HELP ${name} [ALPHA] ${help}`, `# TYPE ${name} ${type}`];
  for (const s of samples) lines.push(`${name}${s.labels ? `{${s.labels}}` : ''} ${s.value}`);
  return lines.join('\n');
}

export function renderMetrics(source: ServerSource, nowMs: number): string {
  const entries = source.statuses();
  const runningPods = entries.filter((e) => e.runtime?.sandboxes.some((s) => s.state === PodSandboxState.SANDBOX_READY)).length;
  const byState = new Map<string, number>(Object.values(CONTAINER_STATE_LABEL).map((l) => [l, 0]));
  for (const e of entries) {
    for (const c of e.runtime?.containers ?? []) {
      const label = CONTAINER_STATE_LABEL[c.state] ?? 'unknown';
      byState.set(label, (byState.get(label) ?? 0) + 1);
    }
  }
  const lastSeen = (nowMs - source.sinceLastRelistMs()) / 1000;
  return (
    [
      gauge('bootlet_unexpected_errors_total', 'Unhandled promise rejections and uncaught exceptions (bugs) that bootlet logged and survived.', [{ value: source.unexpectedErrors?.() ?? 0 }], 'counter'),
      gauge('kubelet_pleg_last_seen_seconds', 'Timestamp in seconds when PLEG was last seen active.', [{ value: lastSeen }]),
      gauge(
        'kubelet_running_containers',
        'Number of containers currently running',
        [...byState].sort(([a], [b]) => (a < b ? -1 : 1)).map(([state, value]) => ({ labels: `container_state="${state}"`, value })),
      ),
      gauge('kubelet_running_pods', 'Number of pods that have a running pod sandbox', [{ value: runningPods }]),
    ].join('\n') + '\n'
  );
}
