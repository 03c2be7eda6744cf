// The authorization attributes of a kubelet API request (pkg/kubelet/server/auth.go, with
// KubeletFineGrainedAuthz as it is on by default since 1.33): resource `nodes`, name = this node,
// verb from the HTTP method, and the subresources to try in order: /pods, /healthz and /configz are
// allowed by their own subresource or by `proxy`; /stats, /metrics and /logs only by theirs;
// everything else (logs of containers, exec, attach, port-forward) by `proxy`. One deliberate
// difference: the streaming paths always ask `create`.

export interface RequestAttributes {
  /** create, get, update, patch, delete; '' for other methods (HEAD), as the kubelet leaves it. */
  readonly verb: string;
  readonly subresources: readonly string[];
}

const VERBS: Record<string, string> = { POST: 'create', GET: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** isSubpath: `path` itself or anything under it. */
export function isSubpath(subpath: string, path: string): boolean {
  const p = path.replace(/\/$/, '');
  return subpath === p || (subpath.startsWith(p) && subpath[p.length] === '/');
}

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
  const subresources: string[] = [];
  if (isSubpath(path, '/pods') || isSubpath(path, '/runningpods/')) subresources.push('pods');
  else if (isSubpath(path, '/healthz')) subresources.push('healthz');
  else if (isSubpath(path, '/configz')) subresources.push('configz');

  if (isSubpath(path, '/stats/')) subresources.push('stats');
  else if (isSubpath(path, '/metrics')) subresources.push('metrics');
  else if (isSubpath(path, '/logs/')) subresources.push('log');
  else if (isSubpath(path, '/checkpoint/')) subresources.push('checkpoint');
  else subresources.push('proxy');
  const streaming = STREAMING_ROOTS.some((root) => isSubpath(path, root));
  return { verb: streaming ? 'create' : (VERBS[method] ?? ''), subresources };
}
