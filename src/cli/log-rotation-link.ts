// Container log rotation (containerLogMaxSize, containerLogMaxFiles, containerLogMonitorInterval) over
// the running containers the pod cache knows: it has read every container's status, so a round makes
// no CRI call of its own.
import type { RuntimeService } from '../cri/cri-types.js';
import { ContainerState } from '../cri/cri-types.js';
import type { Logger } from '../log/logger.js';
import { ContainerLogManager } from '../node/container-log-manager.js';
import type { PodCache } from '../pleg/pod-cache.js';
import type { BootletOptions } from './options.js';

export function linkLogRotation(
  opts: BootletOptions,
  runtime: RuntimeService,
  cache: Pick<PodCache, 'pods'>,
  logger: Logger,
): ContainerLogManager {
  return new ContainerLogManager({
    runtime,
    logger,
    maxSizeBytes: opts.containerLogMaxSizeBytes,
    maxFiles: opts.containerLogMaxFiles,
    intervalMs: opts.containerLogMonitorIntervalMs,
    runningContainers: () =>
      [...cache.pods().values()].flatMap((p) =>
        p.containers
          .filter((c) => c.state === ContainerState.CONTAINER_RUNNING)
          .map((c) => ({ id: c.id, logPath: c.logPath })),
      ),
  });
}
