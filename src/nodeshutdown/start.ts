// Wires the node shutdown manager to the agent's parts: the pods it runs (pod workers), their
// statuses (status manager), and the API side that must have the final ones before the lock goes.
import type { DesiredPodLookup } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import { LOGIND_CONF_DIR } from './logind-dropin.js';
import { NODE_SHUTDOWN_MESSAGE, NODE_SHUTDOWN_REASON, NodeShutdownManager } from './node-shutdown-manager.js';
import { shutdownPeriods, type ShutdownPriorityPeriod } from './shutdown-groups.js';
import { systemBusSocket } from '../dbus/system-bus-address.js';
import { isActive } from '../podworkers/pod-states.js';
import type { PodWorkerSnapshot } from '../podworkers/snapshot.js';
import type { TerminationRequest } from '../podworkers/termination-request.js';

export interface NodeShutdownSettings {
  shutdownGracePeriodMs: number;
  shutdownGracePeriodCriticalPodsMs: number;
  shutdownGracePeriodByPodPriority: ShutdownPriorityPeriod[];
}

export interface NodeShutdownParts {
  workers: {
    snapshot(): readonly PodWorkerSnapshot[];
    /** Stops the pod through its worker; resolves once nothing of it runs (PodWorkers.stop). */
    stop(uid: string, request: TerminationRequest): Promise<void>;
    restoreAfterShutdown(): void;
  };
  /** The one desired pod set: only its pods are stopped (and later restored). */
  desired: DesiredPodLookup;
  status: { update(uid: string): void; idle(): Promise<void> };
  api?: { flush(podUids: readonly string[], timeoutMs: number): Promise<void> };
  onShuttingDown(on: boolean): void;
  logger: Logger;
}

/** Undefined when graceful shutdown is off (both periods 0 and no list), as in the kubelet. */
export function startNodeShutdown(
  settings: NodeShutdownSettings,
  parts: NodeShutdownParts,
  env: NodeJS.ProcessEnv = process.env,
): NodeShutdownManager | undefined {
  const periods = shutdownPeriods(
    Math.floor(settings.shutdownGracePeriodMs / 1000),
    Math.floor(settings.shutdownGracePeriodCriticalPodsMs / 1000),
    settings.shutdownGracePeriodByPodPriority,
  );
  if (periods.length === 0) {
    parts.logger.v(2).info('No graceful configuration specified, node shutdown will be immediate');
    return undefined;
  }
  const manager = new NodeShutdownManager(
    // BOOTLET_LOGIND_CONF_DIR is for tests: a private logind reads its drop-ins elsewhere.
    {
      periods,
      busSocket: systemBusSocket(env),
      logindConfDir: env.BOOTLET_LOGIND_CONF_DIR || LOGIND_CONF_DIR,
      inhibit: { env },
    },
    {
      runningPods: () => {
        return parts.workers
          .snapshot()
          .filter((w) => !w.orphan && w.pod && isActive(w) && parts.desired.podByUid(w.uid) !== undefined)
          .map((w) => ({ uid: w.uid, key: w.key, pod: w.pod! }));
      },
      stopPod: async (t, graceSeconds) => {
        if (!parts.desired.podByUid(t.uid)) return;
        await parts.workers.stop(t.uid, {
          reason: 'node-shutdown',
          graceSeconds,
          status: { reason: NODE_SHUTDOWN_REASON, message: NODE_SHUTDOWN_MESSAGE },
        });
        // Its worker is at rest now: the terminal status is computed from here.
        parts.status.update(t.uid);
      },
      restorePods: () => parts.workers.restoreAfterShutdown(),
      setShuttingDown: (on) => parts.onShuttingDown(on),
      flush: async (uids, timeoutMs) => {
        await parts.status.idle();
        await parts.api?.flush(uids, timeoutMs);
      },
      logger: parts.logger,
    },
  );
  manager.start();
  return manager;
}
