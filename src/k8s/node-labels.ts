// The well-known labels of a Node and the kubelet's rule for the labels it may give itself
// (k8s.io/kubelet/pkg/apis: well_known_labels.go, IsKubeletLabel), which the NodeRestriction
// admission plugin enforces on the API side.

export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_OS = 'kubernetes.io/os';
export const LABEL_ARCH = 'kubernetes.io/arch';
export const LABEL_OS_BETA = 'beta.kubernetes.io/os';
export const LABEL_ARCH_BETA = 'beta.kubernetes.io/arch';

/** The labels a kubelet puts on its own Node, and reconciles on a Node it takes over. */
export function defaultNodeLabels(node: {
  readonly nodeName: string;
  readonly architecture: string;
  readonly operatingSystem: string;
}): Record<string, string> {
  return {
    [LABEL_ARCH_BETA]: node.architecture,
    [LABEL_OS_BETA]: node.operatingSystem,
    [LABEL_ARCH]: node.architecture,
    [LABEL_HOSTNAME]: node.nodeName,
    [LABEL_OS]: node.operatingSystem,
  };
}

/** On the Node: volumes are attached and detached by the controller, not by this node. */
export const ATTACH_DETACH_ANNOTATION = 'volumes.kubernetes.io/controller-managed-attach-detach';

/** Label keys under kubernetes.io / k8s.io that a kubelet may set on its own Node. */
const KUBELET_LABELS: ReadonlySet<string> = new Set([
  LABEL_HOSTNAME,
  LABEL_OS,
  LABEL_ARCH,
  LABEL_OS_BETA,
  LABEL_ARCH_BETA,
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
  'node.kubernetes.io/windows-build',
]);

/** Label namespaces (and their subdomains) a kubelet may use freely. */
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/** The prefix of a label key (`example.com` of `example.com/x`); '' when it has none. */
export function labelNamespace(key: string): string {
  const i = key.indexOf('/');
  return i < 0 ? '' : key.slice(0, i);
}

/** Whether the namespace is kubernetes.io's or k8s.io's own (or a subdomain of them). */
export function isKubernetesNamespace(ns: string): boolean {
  return ns === 'kubernetes.io' || ns.endsWith('.kubernetes.io') || ns === 'k8s.io' || ns.endsWith('.k8s.io');
}

/** IsKubeletLabel: one of the kubelet's own labels, or in one of its namespaces. */
export function isKubeletLabel(key: string): boolean {
  const ns = labelNamespace(key);
  return KUBELET_LABELS.has(key) || KUBELET_LABEL_NAMESPACES.some((p) => ns === p || ns.endsWith(`.${p}`));
}
