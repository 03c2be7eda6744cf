// /metrics in the Prometheus text format: the agent's one registry (src/metrics), with the
// kubelet's metric names, so that existing dashboards and alerts work unchanged.
import { AgentMetrics, METRICS_CONTENT_TYPE } from '../metrics/agent-metrics.js';
import type { ServerSource } from './source.js';

export { METRICS_CONTENT_TYPE };

/** What a server needs of the registry. */
export interface MetricsRenderer {
  render(): Promise<string>;
}

/** A registry of its own over `source`, for endpoints started without the agent's (tests). */
export function standaloneMetrics(source: ServerSource, now: () => number): MetricsRenderer {
  return new AgentMetrics({ state: source, now });
}
