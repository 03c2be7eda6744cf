// /healthz as the kubelet serves it (k8s.io/apiserver healthz): `ok` when every check passes,
// otherwise 500 with one line per check. bootlet names the reason of a failing check: the
// endpoint is local, and "reason withheld" helps nobody at 3 a.m.
import { formatDuration } from '../util/duration.js';

export interface HealthCheck {
  readonly name: string;
  /** undefined when healthy, else why not. */
  check(): string | undefined;
}

const FIVE_MINUTES_MS = 5 * 60_000;

/** The kubelet's `syncloop` check: the loop must have run within max(2 × syncFrequency, 5m). */
export function syncLoopCheck(sinceLastRelistMs: () => number, syncFrequencyMs: number): HealthCheck {
  const limit = Math.max(2 * syncFrequencyMs, FIVE_MINUTES_MS);
  return {
    name: 'syncloop',
    check: () => {
      const since = sinceLastRelistMs();
      if (since <= limit) return undefined;
      return `sync Loop took longer than expected: no relist for ${formatDuration(Math.floor(since / 1000) * 1000)} (limit ${formatDuration(limit)})`;
    },
  };
}

export const pingCheck: HealthCheck = { name: 'ping', check: () => undefined };

export interface HealthzResult {
  readonly statusCode: 200 | 404 | 500;
  readonly body: string;
}

/**
 * @param only a single check's name (`/healthz/syncloop`), or undefined for all
 * @param verbose list every check even when all pass (`?verbose`)
 */
export function runHealthz(checks: readonly HealthCheck[], only: string | undefined, verbose: boolean): HealthzResult {
  const selected = only === undefined ? checks : checks.filter((c) => c.name === only);
  if (selected.length === 0) return { statusCode: 404, body: `no such health check: ${only}\n` };
  const results = selected.map((c) => ({ name: c.name, error: c.check() }));
  const failed = results.some((r) => r.error !== undefined);
  if (!failed && !verbose) return { statusCode: 200, body: 'ok' };
  const lines = results.map((r) => (r.error === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.error}`));
  lines.push(failed ? 'healthz check failed' : 'healthz check passed');
  return { statusCode: failed ? 500 : 200, body: lines.join('\n') + '\n' };
}
