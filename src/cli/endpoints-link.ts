// The agent's local face: /healthz (ping, and the sync loop's relist age), the read-only endpoints and
// /metrics on the one registry, and systemd's notify socket and watchdog. The endpoints start without
// being waited for: they serve nothing the first sync needs, and the manifests are read (and the
// runtime read back) while they start.
import { droppedLogLines, type Logger } from '../log/logger.js';
import type { AgentMetrics } from '../metrics/agent-metrics.js';
import type { EventedPleg } from '../pleg/pleg.js';
import type { PodWorkers } from '../podworkers/pod-workers.js';
import { unexpectedErrorCount } from '../process/unexpected-errors.js';
import { startEndpoints, type RunningEndpoints } from '../server/endpoints.js';
import { pingCheck, syncLoopCheck, type HealthCheck } from '../server/healthz.js';
import type { ServerSource } from '../server/source.js';
import type { StatusManager } from '../status/status-manager.js';
import { startSystemdLink, type SystemdLink } from '../systemd/systemd-link.js';
import type { BootletOptions } from './options.js';

export interface LocalEndpoints {
  /** What every local server reads of the agent. */
  readonly source: ServerSource;
  readonly checks: readonly HealthCheck[];
  readonly systemd: SystemdLink | undefined;
  /** Rejects when a port cannot be bound in a way that ends the agent. */
  readonly starting: Promise<RunningEndpoints>;
}

export interface LocalEndpointsDeps {
  readonly status: StatusManager;
  readonly workers: PodWorkers;
  readonly pleg: EventedPleg;
  readonly metrics: AgentMetrics;
  readonly logger: Logger;
}

export function startLocalEndpoints(opts: BootletOptions, d: LocalEndpointsDeps): LocalEndpoints {
  const { status, workers, pleg, logger } = d;
  const syncLoop = syncLoopCheck(() => pleg.sinceLastRelistMs(), opts.syncFrequencyMs);
  const checks = [pingCheck, syncLoop];
  const systemd = startSystemdLink({
    env: process.env,
    logger,
    workers: () => workers.snapshot(),
    status: (uid) => status.get(uid),
    onStatusChange: (listener) => void status.onChange(() => listener()),
    health: () => pleg.healthProblem() ?? syncLoop.check(),
  });
  const source: ServerSource = {
    statuses: () => status.all(),
    sinceLastRelistMs: () => pleg.sinceLastRelistMs(),
    unexpectedErrors: unexpectedErrorCount,
    droppedLogLines,
  };
  d.metrics.bind(source);
  const starting = startEndpoints({
    healthzBindAddress: opts.healthzBindAddress,
    healthzPort: opts.healthzPort,
    address: opts.address,
    readOnlyPort: opts.readOnlyPort,
    rootDir: opts.rootDir,
    syncFrequencyMs: opts.syncFrequencyMs,
    source,
    checks,
    metrics: d.metrics,
    logger,
  });
  return { source, checks, systemd, starting };
}
