// Which paths each endpoint answers, as the kubelet splits them: the healthz port only /healthz;
// the read-only port (and bootlet's root-only socket) /healthz, /pods and /metrics.
import { podList } from './pod-list.js';
import { runHealthz, type HealthCheck } from './healthz.js';
import { METRICS_CONTENT_TYPE, type MetricsRenderer } from './metrics.js';
import type { RouteResult, Router } from './http-server.js';
import type { ServerSource } from './source.js';

const TEXT = 'text/plain; charset=utf-8';

function healthzRoute(checks: readonly HealthCheck[], path: string, query: URLSearchParams): RouteResult | undefined {
  if (path !== '/healthz' && !path.startsWith('/healthz/')) return undefined;
  const only = path === '/healthz' ? undefined : path.slice('/healthz/'.length);
  const r = runHealthz(checks, only, query.has('verbose'));
  return { statusCode: r.statusCode, contentType: TEXT, body: r.body };
}

export function healthzRouter(checks: readonly HealthCheck[]): Router {
  return (path, query) => healthzRoute(checks, path, query);
}

export function readOnlyRouter(source: ServerSource, checks: readonly HealthCheck[], metrics: MetricsRenderer): Router {
  return (path, query) => {
    if (path === '/pods' || path === '/pods/') {
      return { statusCode: 200, contentType: 'application/json', body: JSON.stringify(podList(source.statuses())) };
    }
    if (path === '/metrics')
      return metrics.render().then((body) => ({ statusCode: 200, contentType: METRICS_CONTENT_TYPE, body }));
    return healthzRoute(checks, path, query);
  };
}
