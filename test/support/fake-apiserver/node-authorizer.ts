// The Node authorizer's subdivided kinds (node_authorizer.go): a node reads a secret or configmap
// (get, and list/watch narrowed to one object by fieldSelector metadata.name) only when a pod bound
// to it refers to it, and creates a token only for the service account of such a pod. Its answer is
// Allow or NoOpinion with the reason the Forbidden message ends with.
import { hasPathFrom, type GraphVertex } from './node-graph.js';
import type { ResourceRequest } from './request-info.js';
import type { ObjectStore } from './store.js';

export type NodeDecision = { allowed: true } | { allowed: false; reason: string };

const SUBDIVIDED: Record<string, GraphVertex> = { secrets: 'secret', configmaps: 'configmap', serviceaccounts: 'serviceaccount' };

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

/** undefined: the kind is not subdivided, the node's static rules decide. */
export function authorizeNodeGraph(nodeName: string, info: ResourceRequest, store: ObjectStore | undefined): NodeDecision | undefined {
  if (info.rt.group !== '') return undefined;
  const vertex = SUBDIVIDED[info.rt.resource];
  if (!vertex) return undefined;
  const name = attributesName(info);
  const noPath: NodeDecision = { allowed: false, reason: `no relationship found between node '${nodeName}' and this object` };
  if (vertex === 'serviceaccount') {
    if (info.verb !== 'create' || !name) return { allowed: false, reason: 'can only create tokens for individual service accounts' };
    if (info.subresource !== 'token') return { allowed: false, reason: 'can only create token subresource of serviceaccount' };
  } else {
    if (!['get', 'list', 'watch'].includes(info.verb)) return { allowed: false, reason: 'can only read resources of this type' };
    if (info.subresource) return { allowed: false, reason: 'cannot read subresource' };
    if (!info.namespace) return { allowed: false, reason: 'can only read namespaced object of this type' };
    if (!name) return { allowed: false, reason: 'No Object name found' };
  }
  if (!store || !hasPathFrom(store, nodeName, vertex, info.namespace, name)) return noPath;
  return { allowed: true };
}
