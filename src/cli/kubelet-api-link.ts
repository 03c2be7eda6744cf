// The kubelet API (:10250) of the agent, started once the first pods' sync is under way
// (deferred-kubelet-api.ts): its modules are imported then, not at start.
import type { ImageService, RuntimeService } from '../cri/cri-types.js';
import { isCgroup2UnifiedMode, UNIFIED_MOUNTPOINT } from '../cm/cgroup-subsystems.js';
import type { PodCgroups } from '../cm/container-manager.js';
import type { Logger } from '../log/logger.js';
import type { AgentMetrics } from '../metrics/agent-metrics.js';
import type { HealthCheck } from '../server/healthz.js';
import type { ApiCredentials } from '../server/kubelet/start-kubelet-api.js';
import type { ServerSource } from '../server/source.js';
import { deferKubeletApi, type DeferredKubeletApi } from './deferred-kubelet-api.js';
import type { BootletOptions } from './options.js';
import { configz } from './settings/configz.js';

export interface KubeletApiLinkDeps {
  readonly source: ServerSource;
  readonly metrics: AgentMetrics;
  readonly runtime: RuntimeService;
  readonly images: Pick<ImageService, 'imageFsInfo'>;
  readonly checks: readonly HealthCheck[];
  /** The API side, for the reviews and the serving certificate; undefined standalone. */
  readonly api: ApiCredentials | undefined;
  /** The pod cgroups, for the Summary API's pod figures and pressure on cgroup v2. */
  readonly cgroups: Pick<PodCgroups, 'podCgroupParent'>;
  readonly logger: Logger;
}

export function linkKubeletApi(opts: BootletOptions, d: KubeletApiLinkDeps): DeferredKubeletApi {
  return deferKubeletApi({
    enabled: opts.enableServer,
    start: () =>
      import('../server/kubelet/start-kubelet-api.js').then((m) =>
        m.startKubeletApi(opts, {
          source: d.source,
          metrics: () => d.metrics.render(),
          runtime: d.runtime,
          images: d.images,
          checks: d.checks,
          api: d.api,
          configz: () => configz(opts),
          cgroups: {
            podCgroup: (pod) => d.cgroups.podCgroupParent(pod) || undefined,
            unifiedRoot: isCgroup2UnifiedMode() ? UNIFIED_MOUNTPOINT : undefined,
          },
          logger: d.logger,
        }),
      ),
    logger: d.logger,
  });
}
