// The container runtime as the agent starts with it: the CRI connection (every call counted in the
// metrics), its health (RuntimeReady, NetworkReady) polled, and the pod CIDR handed to it: the
// configuration's at once (standalone, as the kubelet at start), the Node's once the API side has one.
import { connectRuntime, type RuntimeConnection } from '../cri/cri-client.js';
import { RuntimePodCIDR } from '../kuberuntime/pod-cidr.js';
import { RuntimeHealth } from '../kuberuntime/runtime-health.js';
import type { Logger } from '../log/logger.js';
import type { AgentMetrics } from '../metrics/agent-metrics.js';
import { criCallMetrics } from '../metrics/metrics-link.js';
import type { BootletOptions } from './options.js';

export interface RuntimeLink extends RuntimeConnection {
  readonly health: RuntimeHealth;
  readonly podCIDR: RuntimePodCIDR;
}

/** Throws RuntimeConnectError when the runtime does not answer. */
export async function connectRuntimeLink(
  opts: BootletOptions,
  metrics: AgentMetrics,
  logger: Logger,
): Promise<RuntimeLink> {
  const { runtime, images, version } = await connectRuntime(opts.containerRuntimeEndpoint, {
    requestTimeoutMs: opts.runtimeRequestTimeoutMs,
    imageServiceEndpoint: opts.imageServiceEndpoint,
    onCall: criCallMetrics(metrics),
  });
  logger.info('Container runtime initialized', {
    containerRuntime: version.runtimeName,
    version: version.runtimeVersion,
    apiVersion: version.runtimeApiVersion,
  });
  const health = new RuntimeHealth(runtime, logger);
  health.start();
  // As the kubelet's sync loop waits for the first runtime status: admission reads the runtime's
  // features (SupplementalGroupsPolicy), which a pod admitted before it would be refused for.
  await health.pollNow();
  // A new pod CIDR in the runtime: its network state is read again at once.
  const podCIDR = new RuntimePodCIDR(runtime, logger, () => void health.pollNow());
  void podCIDR.update(opts.podCIDR);
  return { runtime, images, version, health, podCIDR };
}
