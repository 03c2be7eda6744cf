/** One served resource: what discovery announces and how URLs map to storage. */
export interface ResourceType {
  group: string;
  version: string;
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  subresources: string[];
  verbs: string[];
  /** Storage key; two group-versions of one resource could share it. */
  storageKey: string;
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function rt(
  group: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  shortNames: string[] = [],
  subresources: string[] = [],
  version = 'v1',
  verbs = ALL_VERBS,
): ResourceType {
  return {
    group,
    version,
    resource,
    singular: kind.toLowerCase(),
    kind,
    namespaced,
    shortNames,
    subresources,
    verbs,
    storageKey: group ? `${resource}.${group}` : resource,
  };
}

export const RESOURCES: readonly ResourceType[] = [
  rt('', 'namespaces', 'Namespace', false, ['ns'], ['status']),
  rt('', 'nodes', 'Node', false, ['no'], ['status', 'proxy']),
  rt(
    '',
    'pods',
    'Pod',
    true,
    ['po'],
    ['status', 'ephemeralcontainers', 'resize', 'log', 'exec', 'attach', 'portforward'],
  ),
  rt('', 'events', 'Event', true, ['ev']),
  rt('', 'configmaps', 'ConfigMap', true, ['cm']),
  rt('', 'secrets', 'Secret', true),
  rt('', 'services', 'Service', true, ['svc'], ['status']),
  rt('', 'serviceaccounts', 'ServiceAccount', true, ['sa'], ['token']),
  rt('coordination.k8s.io', 'leases', 'Lease', true),
  rt('events.k8s.io', 'events', 'Event', true, ['ev']),
  rt(
    'certificates.k8s.io',
    'certificatesigningrequests',
    'CertificateSigningRequest',
    false,
    ['csr'],
    ['approval', 'status'],
  ),
  rt('node.k8s.io', 'runtimeclasses', 'RuntimeClass', false),
  rt('authentication.k8s.io', 'tokenreviews', 'TokenReview', false, [], [], 'v1', ['create']),
  rt('authorization.k8s.io', 'subjectaccessreviews', 'SubjectAccessReview', false, [], [], 'v1', ['create']),
  // Served from the nodes' /metrics/resource, as metrics-server would (metrics-api.ts).
  rt('metrics.k8s.io', 'nodes', 'NodeMetrics', false, [], [], 'v1beta1', ['get', 'list']),
  rt('metrics.k8s.io', 'pods', 'PodMetrics', true, [], [], 'v1beta1', ['get', 'list']),
];

/** Subresources that are not stored objects: the API server proxies them to the pod's node. */
export const POD_PROXY_SUBRESOURCES = ['log', 'exec', 'attach', 'portforward'];

export function apiVersionOf(t: ResourceType): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

export function findResource(group: string, version: string, resource: string): ResourceType | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.resource === resource);
}

export function byKey(storageKey: string): ResourceType {
  const found = RESOURCES.find((r) => r.storageKey === storageKey);
  if (!found) throw new Error(`unknown resource ${storageKey}`);
  return found;
}

export const GROUPS: readonly string[] = [
  'coordination.k8s.io',
  'events.k8s.io',
  'certificates.k8s.io',
  'node.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'metrics.k8s.io',
];

/** The one version each group serves. */
export function groupVersion(group: string): string {
  return RESOURCES.find((r) => r.group === group)?.version ?? 'v1';
}

/** Namespaces that a fresh cluster has. */
export const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
