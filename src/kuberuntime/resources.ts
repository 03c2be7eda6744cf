// Linux cgroup settings of a container from its requests and limits, with the kubelet's formulas
// (kuberuntime_container_linux.go, qos/policy.go; CPU shares and quota are cm's: cm/cpu-shares.ts).
import type { Container, Pod } from 'kubernetes-types/core/v1';
import type { LinuxContainerResources } from '../cri/cri-types.js';
import { qosClass } from '../k8s/qos.js';
import { parseQuantity } from '../k8s/quantity.js';
import { CPU_PERIOD_US, milliCpuToQuota, milliCpuToShares } from '../cm/cpu-shares.js';

export const GUARANTEED_OOM_SCORE_ADJ = -997;
export const BESTEFFORT_OOM_SCORE_ADJ = 1000;

function milli(q: string | undefined): number {
  return q === undefined ? 0 : parseQuantity(q).milliValue();
}

/**
 * Static pods are critical pods; of those only system-node-critical ones are kept away from the
 * OOM killer regardless of QoS (types.IsNodeCriticalPod). system-cluster-critical is not.
 */
export function isNodeCriticalPod(pod: Pod): boolean {
  return pod.spec?.priorityClassName === 'system-node-critical';
}

export function oomScoreAdj(pod: Pod, container: Container, nodeMemoryCapacityBytes: number): number {
  if (isNodeCriticalPod(pod)) return GUARANTEED_OOM_SCORE_ADJ;
  const qos = qosClass(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BESTEFFORT_OOM_SCORE_ADJ;
  // Burstable: the larger the share of node memory requested, the lower the score. Integer
  // division as in Go, done in BigInt so 1000 * request cannot lose precision.
  const req = container.resources?.requests?.memory;
  const memReq = BigInt(req === undefined ? 0 : parseQuantity(req).value());
  const cap = BigInt(Math.max(1, Math.floor(nodeMemoryCapacityBytes)));
  const adj = 1000 - Number((1000n * memReq) / cap);
  // Below a Guaranteed pod using all memory (score 1000 - 997 = 3) never; and always above BestEffort.
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}

export function linuxContainerResources(
  pod: Pod,
  container: Container,
  nodeMemoryCapacityBytes: number,
): LinuxContainerResources {
  const requests = container.resources?.requests ?? {};
  const limits = container.resources?.limits ?? {};
  // A limit without a request means request = limit (defaulting does this; repeated for pods
  // that were not defaulted).
  const cpuShares =
    requests.cpu === undefined && limits.cpu !== undefined
      ? milliCpuToShares(milli(limits.cpu))
      : milliCpuToShares(milli(requests.cpu));
  return {
    cpuShares,
    cpuPeriod: CPU_PERIOD_US,
    cpuQuota: milliCpuToQuota(milli(limits.cpu), CPU_PERIOD_US),
    memoryLimitInBytes: limits.memory === undefined ? 0 : parseQuantity(limits.memory).value(),
    oomScoreAdj: oomScoreAdj(pod, container, nodeMemoryCapacityBytes),
  };
}
