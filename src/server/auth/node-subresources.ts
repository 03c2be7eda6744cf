// Which nodes/<subresource> a kubelet API path is authorized as (pkg/kubelet/server/auth.go,
// GetRequestAttributes, with KubeletFineGrainedAuthz GA and locked on in 1.36): the read-only
// endpoints of KEP-2862 are asked as their own subresource first and as `proxy` after it, so a role
// written for the coarse `nodes/proxy` keeps working; /stats, /metrics, /logs and /checkpoint only as
// theirs; everything else (container logs, exec, attach, port-forward, run, pprof) as `proxy`.

/** isSubpath: `path` itself or anything under it (a trailing slash of `path` is ignored). */
export function isSubpath(subpath: string, path: string): boolean {
  const p = path.replace(/\/$/, '');
  return subpath === p || (subpath.startsWith(p) && subpath[p.length] === '/');
}

/** The KEP-2862 endpoints: path → the subresource asked before `proxy`, in the kubelet's order. */
const FINE_GRAINED: readonly (readonly [string, string])[] = [
  ['/pods', 'pods'],
  ['/healthz', 'healthz'],
  ['/configz', 'configz'],
  ['/statusz', 'statusz'],
  ['/runningpods/', 'pods'],
];

/** Paths with a subresource of their own and no fallback. */
const OWN: readonly (readonly [string, string])[] = [
  ['/stats/', 'stats'],
  ['/metrics', 'metrics'],
  // "log", as pods/log is named.
  ['/logs/', 'log'],
  ['/checkpoint/', 'checkpoint'],
];

/** The subresources to ask, in order; the first one allowed lets the request through. */
export function nodeSubresources(path: string): string[] {
  const asked: string[] = [];
  const fine = FINE_GRAINED.find(([p]) => isSubpath(path, p));
  if (fine) asked.push(fine[1]);
  const own = OWN.find(([p]) => isSubpath(path, p));
  asked.push(own ? own[1] : 'proxy');
  return asked;
}
