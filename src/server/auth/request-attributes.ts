// The authorization attributes of a kubelet API request (pkg/kubelet/server/auth.go): resource
// `nodes`, name = this node, verb from the HTTP method, and the subresources to try in order
// (node-subresources.ts). One deliberate difference: the streaming paths always ask `create`.
import { isSubpath, nodeSubresources } from './node-subresources.js';

export interface RequestAttributes {
  /** create, get, update, patch, delete; '' for other methods (HEAD), as the kubelet leaves it. */
  readonly verb: string;
  readonly subresources: readonly string[];
}

const VERBS: Record<string, string> = { POST: 'create', GET: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/**
 * Paths that open a stream into a container. bootlet asks `create` for them whatever the method: the
 * kubelet takes the verb from the method, so a WebSocket GET needs only `get nodes/proxy` there
 * (kubernetes PR #136550, closed; README, "differs from the kubelet").
 */
const STREAMING_ROOTS = ['/exec', '/attach', '/portForward', '/run'];

/** As Go's URL.Path, which the kubelet's filter reads: `/%65xec/...` is `/exec/...` to the router too. */
function decodedPath(rawPath: string): string {
  try {
    return decodeURIComponent(rawPath);
  } catch {
    return rawPath;
  }
}

export function requestAttributes(method: string, rawPath: string): RequestAttributes {
  const path = decodedPath(rawPath);
  const streaming = STREAMING_ROOTS.some((root) => isSubpath(path, root));
  return { verb: streaming ? 'create' : (VERBS[method] ?? ''), subresources: nodeSubresources(path) };
}
