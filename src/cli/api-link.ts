// Starts the API side for a node with a kubeconfig and links it to the rest: the workers' events
// and unhealthy probes become the pods' Events, a restart asked on a mirror pod goes to the
// workers, the Node's pod CIDR to the runtime, and the API server's pods bound to the node to the
// desired set. Standalone (no API module) there is nothing to start.
import type { ApiSide } from '../apiserver/api-side.js';
import type { NodeInfoSource } from '../node/node-info.js';
import type { DeferredPodObjects } from '../apiserver/pod-objects/deferred-pod-objects.js';
import type { DeferredRuntimeClasses } from '../apiserver/pod-objects/runtime-classes.js';
import { startApiPodSource } from '../config/pod-config/start-sources.js';
import type { PodConfig } from '../config/pod-config/pod-config.js';
import type { RuntimePodCIDR } from '../kuberuntime/pod-cidr.js';
import type { Logger } from '../log/logger.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import type { PodWorkers } from '../podworkers/pod-workers.js';
import type { ProberManager } from '../prober/prober-manager.js';
import { unhealthyEvent } from '../prober/unhealthy-event.js';
import type { StatusManager } from '../status/status-manager.js';
import type { ApiModule } from './api-client-mode.js';
import type { BootletOptions } from './options.js';

export interface ApiLinkDeps {
  readonly opts: BootletOptions;
  readonly nodeInfo: NodeInfoSource;
  readonly podConfig: PodConfig;
  readonly status: StatusManager;
  readonly workers: PodWorkers;
  readonly prober: ProberManager;
  readonly podCIDR: RuntimePodCIDR;
  readonly podObjects: DeferredPodObjects | undefined;
  readonly runtimeClasses: DeferredRuntimeClasses | undefined;
  /** The workers' observers: the API side's joins them. */
  readonly observers: PodWorkerObserver[];
  readonly logger: Logger;
}

export function startApiLink(apiModule: ApiModule | undefined, d: ApiLinkDeps): ApiSide | undefined {
  const { opts, podConfig, workers, logger } = d;
  if (!opts.kubeconfig || !apiModule) {
    logger.info('No --kubeconfig: running standalone, no API server will be contacted');
    return undefined;
  }
  // Read by the API pod source's callback, which may be handed out before startApiSide returns.
  let api: ApiSide | undefined;
  api = apiModule.startApiSide({
    kubeconfigPath: opts.kubeconfig,
    bootstrapKubeconfigPath: opts.bootstrapKubeconfig,
    certDir: opts.certDir,
    rotateCertificates: opts.rotateCertificates,
    nodeInfo: d.nodeInfo,
    staticPods: podConfig.staticPods(),
    statuses: d.status.podStatuses(),
    logger,
    registerNode: opts.registerNode,
    // A restart asked on a mirror pod (kubectl.kubernetes.io/restartedAt): the workers do it.
    onRestartRequest: (uid, value) => workers.restartContainers(uid, value),
    onPodCIDR: (cidrs) => void d.podCIDR.update(cidrs),
    nodeStatusUpdateFrequencyMs: opts.nodeStatusUpdateFrequencyMs,
    nodeStatusReportFrequencyMs: opts.nodeStatusReportFrequencyMs,
    nodeLeaseDurationSeconds: opts.nodeLeaseDurationSeconds,
    // A pod that cannot run here is told as its Warning event (FailedMount for a volume kind bootlet does not mount).
    podSource: (nodePods) =>
      startApiPodSource(nodePods, podConfig, opts.nodeName, logger, (p, reason, message) =>
        api?.recordPodEvent({ ...p, type: 'Warning', reason, message }),
      ),
    apiPods: podConfig.apiPodView(),
    podObjects: d.podObjects,
    runtimeClasses: d.runtimeClasses,
  });
  d.observers.push(api.observer);
  d.prober.onResult((e) => {
    const event = unhealthyEvent(e);
    const pod = event && workers.podRef(e.podUid);
    if (event && pod) api?.recordPodEvent({ ...pod, uid: e.podUid, ...event, container: e.containerName });
  });
  logger.info('API server client configured; the node runs on its own until the server answers', {
    kubeconfig: opts.kubeconfig,
  });
  return api;
}
