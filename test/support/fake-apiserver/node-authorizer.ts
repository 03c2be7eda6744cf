// The Node authorizer's subdivided kinds (node_authorizer.go): a node reads a secret or configmap
// (get, and list/watch narrowed to one object by fieldSelector metadata.name) only when a pod bound
// to it refers to it, and creates a token only for the service account of such a pod. Its answer is
// Allow or NoOpinion with the reason the Forbidden message ends with. With AuthorizeNodeWithSelectors
// (on by default since 1.32) pods and nodes are decided here too: a node lists and watches pods only
// with `fieldSelector=spec.nodeName=<itself>` (or one pod bound to it, by name), gets only pods bound
// to it, and reads only its own Node.
import { hasPathFrom, type GraphVertex } from './node-graph.js';
import type { ResourceRequest } from './request-info.js';
import type { ObjectStore } from './store.js';
import { obj, str } from './types.js';

export type NodeDecision = { allowed: true } | { allowed: false; reason: string };

const SUBDIVIDED: Record<string, GraphVertex> = {
  secrets: 'secret',
  configmaps: 'configmap',
  serviceaccounts: 'serviceaccount',
};

/**
 * The name the authorizer sees: the path's, or for list and watch the fieldSelector's exact
 * `metadata.name` (as the request info factory reads it).
 */
export function attributesName(info: ResourceRequest): string {
  if (info.name) return info.name;
  if (info.verb !== 'list' && info.verb !== 'watch') return '';
  for (const term of (info.query.get('fieldSelector') ?? '').split(',')) {
    const m = /^\s*metadata\.name\s*(==|=)\s*(.*?)\s*$/.exec(term);
    if (m && m[2] && !/[/%]/.test(m[2]) && m[2] !== '.' && m[2] !== '..') return m[2];
  }
  return '';
}

/** The fieldSelector has `spec.nodeName=<node>` (or `==`) as one of its terms (hasNodeNameSelector). */
export function hasNodeNameSelector(info: ResourceRequest, nodeName: string): boolean {
  return (info.query.get('fieldSelector') ?? '').split(',').some((term) => {
    const m = /^\s*spec\.nodeName\s*(==|=)\s*(.*?)\s*$/.exec(term);
    return m !== null && m[2] === nodeName;
  });
}

const ALLOW: NodeDecision = { allowed: true };
const noOpinion = (reason = ''): NodeDecision => ({ allowed: false, reason });
const noPathTo = (nodeName: string): NodeDecision =>
  noOpinion(`no relationship found between node '${nodeName}' and this object`);

/** The graph's pod → node edge: the pod is bound to the node (mirror pods too: only their edges onward are cut). */
function podOnNode(
  nodeName: string,
  info: ResourceRequest,
  name: string,
  store: ObjectStore | undefined,
): NodeDecision {
  if (!name) return noOpinion('No Object name found');
  const pod = store?.get('pods', info.namespace, name);
  return pod && str(obj(pod.spec).nodeName) === nodeName ? ALLOW : noPathTo(nodeName);
}

/** authorizePod. */
function authorizePod(nodeName: string, info: ResourceRequest, store: ObjectStore | undefined): NodeDecision {
  const verb = info.verb;
  if (info.subresource === '') {
    if (verb === 'get') return podOnNode(nodeName, info, info.name, store);
    if (verb === 'list' || verb === 'watch') {
      if (hasNodeNameSelector(info, nodeName)) return ALLOW;
      const name = attributesName(info);
      if (name) return podOnNode(nodeName, info, name, store);
      return noOpinion('can only list/watch pods with spec.nodeName field selector');
    }
    if (verb === 'create' || verb === 'delete') return ALLOW; // NodeRestriction limits them
  }
  if (info.subresource === 'status' && (verb === 'update' || verb === 'patch')) return ALLOW;
  if (info.subresource === 'eviction' && verb === 'create') return ALLOW;
  return noOpinion();
}

/** authorizeNode. */
function authorizeNode(nodeName: string, info: ResourceRequest): NodeDecision {
  const verb = info.verb;
  if (info.subresource === '') {
    if (verb === 'create' || verb === 'update' || verb === 'patch') return ALLOW; // NodeRestriction limits them
    if (verb === 'get' || verb === 'list' || verb === 'watch') {
      const name = attributesName(info);
      if (name === nodeName) return ALLOW;
      if (!name) return noOpinion(`node '${nodeName}' cannot read all nodes, only its own Node object`);
      return noOpinion(`node '${nodeName}' cannot read '${name}', only its own Node object`);
    }
  }
  if (info.subresource === 'status' && (verb === 'update' || verb === 'patch')) return ALLOW;
  return noOpinion();
}

/** undefined: the kind is not subdivided, the node's static rules decide. */
export function authorizeNodeGraph(
  nodeName: string,
  info: ResourceRequest,
  store: ObjectStore | undefined,
): NodeDecision | undefined {
  if (info.rt.group !== '') return undefined;
  if (info.rt.resource === 'pods') return authorizePod(nodeName, info, store);
  if (info.rt.resource === 'nodes') return authorizeNode(nodeName, info);
  const vertex = SUBDIVIDED[info.rt.resource];
  if (!vertex) return undefined;
  const name = attributesName(info);
  const noPath: NodeDecision = {
    allowed: false,
    reason: `no relationship found between node '${nodeName}' and this object`,
  };
  if (vertex === 'serviceaccount') {
    if (info.verb !== 'create' || !name)
      return { allowed: false, reason: 'can only create tokens for individual service accounts' };
    if (info.subresource !== 'token')
      return { allowed: false, reason: 'can only create token subresource of serviceaccount' };
  } else {
    if (!['get', 'list', 'watch'].includes(info.verb))
      return { allowed: false, reason: 'can only read resources of this type' };
    if (info.subresource) return { allowed: false, reason: 'cannot read subresource' };
    if (!info.namespace) return { allowed: false, reason: 'can only read namespaced object of this type' };
    if (!name) return { allowed: false, reason: 'No Object name found' };
  }
  if (!store || !hasPathFrom(store, nodeName, vertex, info.namespace, name)) return noPath;
  return { allowed: true };
}
