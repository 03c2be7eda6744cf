// The authorization attributes of a kubelet API request (pkg/kubelet/server/auth.go): resource
// `nodes`, name = this node, verb from the HTTP method, and the subresources to try in order
// (node-subresources.ts).
import { nodeSubresources } from './node-subresources.js';

export interface RequestAttributes {
  /** create, get, update, patch, delete; '' for other methods (HEAD), as the kubelet leaves it. */
  readonly verb: string;
  readonly subresources: readonly string[];
}

const VERBS: Record<string, string> = { POST: 'create', GET: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

export function requestAttributes(method: string, path: string): RequestAttributes {
  return { verb: VERBS[method] ?? '', subresources: nodeSubresources(path) };
}
