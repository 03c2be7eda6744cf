import { nodeIdentity, type UserInfo } from './authn.js';
import { attributesName, authorizeNodeGraph } from './node-authorizer.js';
import type { RequestInfo } from './request-info.js';
import type { ObjectStore } from './store.js';
import { forbidden, type ApiError } from './status.js';

/** What the system:node role plus the Node authorizer let a kubelet do (kept to what bootlet needs). */
const NODE_RULES: Record<string, string[]> = {
  nodes: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  'nodes/status': ['get', 'update', 'patch'],
  pods: ['get', 'list', 'watch', 'create', 'delete'],
  'pods/status': ['get', 'update', 'patch'],
  services: ['get', 'list', 'watch'],
  events: ['create', 'update', 'patch'],
  'events.k8s.io/events': ['create', 'update', 'patch'],
  'coordination.k8s.io/leases': ['get', 'create', 'update', 'patch', 'delete'],
  'certificates.k8s.io/certificatesigningrequests': ['create', 'get', 'list', 'watch'],
  'node.k8s.io/runtimeclasses': ['get', 'list', 'watch'],
  // The kubelet API's webhooks (system:node has them, for --authentication-token-webhook and Webhook authorization).
  'authentication.k8s.io/tokenreviews': ['create'],
  'authorization.k8s.io/subjectaccessreviews': ['create'],
};

/** system:kubelet-api-admin, which kubeadm binds to the API server's kubelet client (CN kube-apiserver-kubelet-client). */
export const KUBELET_API_CLIENT = 'kube-apiserver-kubelet-client';
const KUBELET_API_ADMIN_RULES: Record<string, string[]> = Object.fromEntries(
  [
    'nodes/proxy',
    'nodes/log',
    'nodes/stats',
    'nodes/metrics',
    'nodes/spec',
    'nodes/pods',
    'nodes/healthz',
    'nodes/configz',
  ].map((r) => [r, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'proxy']]),
);

/** Rules granted in a test (an RBAC binding): resource key (`nodes/proxy`, `pods/log`) → verbs, per user or group. */
export type Grants = Map<string, Record<string, string[]>>;

/** system:node-bootstrapper, which kubeadm binds to the group of its node bootstrap tokens. */
export const BOOTSTRAP_TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';
const BOOTSTRAPPER_RULES: Record<string, string[]> = {
  'certificates.k8s.io/certificatesigningrequests': ['create', 'get', 'list', 'watch'],
};

/** Paths every authenticated user may read (system:discovery and system:public-info-viewer). */
const DISCOVERY = /^\/(api|apis)(\/[^/]+(\/[^/]+)?)?\/?$|^\/version\/?$|^\/(healthz|livez|readyz)(\/.*)?$|^\/openapi\//;

/**
 * Returns undefined when allowed, else the 403 Status the server would write. The store lets the Node
 * authorizer look at the pods bound to a node (secrets, configmaps, service account tokens).
 */
export function authorize(
  user: UserInfo,
  info: RequestInfo,
  grants: Grants = new Map(),
  store?: ObjectStore,
): ApiError | undefined {
  if (user.groups.includes('system:masters')) return undefined;
  if (info.kind !== 'resource') {
    const path = info.path;
    const verb = info.kind === 'nonresource' ? info.verb : 'get';
    if (verb === 'get' && DISCOVERY.test(path)) return undefined;
    return forbidden(undefined, '', `User "${user.name}" cannot ${verb} path "${path}"`);
  }
  const { isNode, nodeName } = nodeIdentity(user);
  const res = info.subresource ? `${info.rt.resource}/${info.subresource}` : info.rt.resource;
  const ruleKey = info.rt.group ? `${info.rt.group}/${res}` : res;
  const graph = isNode ? authorizeNodeGraph(nodeName, info, store) : undefined;
  if (graph?.allowed) return undefined;
  if (isNode && !graph && (NODE_RULES[ruleKey] ?? []).includes(info.verb)) return undefined;
  if (user.groups.includes(BOOTSTRAP_TOKEN_GROUP) && (BOOTSTRAPPER_RULES[ruleKey] ?? []).includes(info.verb))
    return undefined;
  if (user.name === KUBELET_API_CLIENT && (KUBELET_API_ADMIN_RULES[ruleKey] ?? []).includes(info.verb))
    return undefined;
  for (const who of [user.name, ...user.groups])
    if ((grants.get(who)?.[ruleKey] ?? []).includes(info.verb)) return undefined;
  const scope = info.namespace && info.rt.namespaced ? `in the namespace "${info.namespace}"` : 'at the cluster scope';
  // The union authorizer's reasons (only the Node authorizer gives one) follow the message.
  const reason = graph && !graph.allowed && graph.reason ? `: ${graph.reason}` : '';
  return forbidden(
    info.rt,
    attributesName(info),
    `User "${user.name}" cannot ${info.verb} resource "${res}" in API group "${info.rt.group}" ${scope}${reason}`,
  );
}
