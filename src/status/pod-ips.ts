// hostIP/hostIPs and podIP/podIPs. A host-network pod has the node's address; a pod-network pod
// has its sandbox's. bootlet sets them also without an API server (the kubelet does only with a
// kube client) because `bootlet pods -o wide` and the probes want them from the start.
import type { HostIP, Pod, PodIP, PodStatus } from 'kubernetes-types/core/v1';
import type { RuntimePod } from '../kuberuntime/runtime-pods.js';

export function podAddresses(
  pod: Pod,
  runtime: RuntimePod | undefined,
  nodeIP: string,
  previous: PodStatus | undefined,
): Pick<PodStatus, 'hostIP' | 'hostIPs' | 'podIP' | 'podIPs'> {
  const out: Pick<PodStatus, 'hostIP' | 'hostIPs' | 'podIP' | 'podIPs'> = {};
  if (nodeIP) {
    out.hostIP = nodeIP;
    out.hostIPs = [{ ip: nodeIP } satisfies HostIP];
  }
  let ips: string[];
  if (pod.spec?.hostNetwork) {
    // Once set, a host-network pod's IP does not change (the kubelet treats it as immutable).
    ips = previous?.podIP
      ? (previous.podIPs ?? [{ ip: previous.podIP }]).map((p) => p.ip ?? '').filter(Boolean)
      : nodeIP
        ? [nodeIP]
        : [];
  } else {
    const newest = runtime?.sandboxes[0];
    ips = newest ? [newest.ip, ...newest.additionalIps].filter(Boolean) : [];
  }
  if (ips.length > 0) {
    out.podIP = ips[0];
    out.podIPs = ips.map((ip): PodIP => ({ ip }));
  }
  return out;
}
