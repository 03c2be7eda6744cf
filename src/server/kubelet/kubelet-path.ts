// The paths the kubelet API answers, parsed strictly: no empty, `.` or `..` segments, no encoded
// slashes, names that are valid Kubernetes names, and exactly the segments each route has.
// Anything else is not a route (404) — before any pod is looked up.
import { dns1123LabelProblem, dns1123SubdomainProblem } from '../../config/k8s-names.js';

export interface PodRef {
  namespace: string;
  name: string;
  /** From the `{uid}` segment of exec, attach and portForward; must match the pod's. */
  uid?: string;
}

export type KubeletPath =
  | { kind: 'healthz'; check?: string }
  | { kind: 'pods' }
  | { kind: 'metrics' }
  | { kind: 'metrics/resource' }
  | { kind: 'stats/summary' }
  | { kind: 'configz' }
  | { kind: 'containerLogs'; pod: PodRef; container: string }
  | { kind: 'exec' | 'attach'; pod: PodRef; container: string }
  | { kind: 'portForward'; pod: PodRef }
  /** /logs/...: the path below /logs as the file server sees it (`/` for /logs/, `''` for /logs). */
  | { kind: 'logs'; path: string }
  /** A debugging path (run, runningpods, pprof) the kubelet has and bootlet does not serve. */
  | { kind: 'unsupported-debug' };

const UID = /^[a-zA-Z0-9][a-zA-Z0-9-]{0,63}$/;
const DEBUG_ROOTS = new Set(['run', 'runningpods', 'debug', 'checkpoint']);

/** Decoded segments, or undefined when the raw path is not clean. */
function segments(rawPath: string): string[] | undefined {
  if (!rawPath.startsWith('/') || rawPath.length > 2048) return undefined;
  const raw = rawPath.slice(1).split('/');
  // One trailing slash is tolerated (`/pods/`), nothing else empty.
  if (raw.length > 1 && raw[raw.length - 1] === '') raw.pop();
  const out: string[] = [];
  for (const r of raw) {
    if (r === '' && raw.length > 1) return undefined;
    if (/%2f|%5c|%00/i.test(r)) return undefined;
    let s: string;
    try {
      s = decodeURIComponent(r);
    } catch {
      return undefined;
    }
    if (s === '.' || s === '..' || s.includes('/')) return undefined;
    out.push(s);
  }
  return out;
}

const isNamespace = (s: string | undefined): s is string => s !== undefined && dns1123LabelProblem(s) === undefined;
const isPodName = (s: string | undefined): s is string => s !== undefined && dns1123SubdomainProblem(s) === undefined;
const isContainer = (s: string | undefined): s is string => s !== undefined && dns1123LabelProblem(s) === undefined;
const isUid = (s: string | undefined): s is string => s !== undefined && UID.test(s);

export function parseKubeletPath(rawPath: string): KubeletPath | undefined {
  const seg = segments(rawPath);
  if (!seg || seg.length === 0) return undefined;
  const [root, a, b, c, d] = seg;
  const n = seg.length;
  switch (root) {
    case 'healthz':
      if (n === 1) return { kind: 'healthz' };
      if (n === 2 && /^[a-z0-9-]{1,63}$/.test(a!)) return { kind: 'healthz', check: a };
      return undefined;
    case 'pods':
      return n === 1 ? { kind: 'pods' } : undefined;
    case 'metrics':
      if (n === 1) return { kind: 'metrics' };
      if (n === 2 && a === 'resource') return { kind: 'metrics/resource' };
      return undefined;
    case 'stats':
      return n === 2 && a === 'summary' ? { kind: 'stats/summary' } : undefined;
    case 'configz':
      return n === 1 ? { kind: 'configz' } : undefined;
    case 'containerLogs':
      if (n === 4 && isNamespace(a) && isPodName(b) && isContainer(c))
        return { kind: 'containerLogs', pod: { namespace: a, name: b }, container: c };
      return undefined;
    case 'exec':
    case 'attach':
      if (n === 4 && isNamespace(a) && isPodName(b) && isContainer(c))
        return { kind: root, pod: { namespace: a, name: b }, container: c };
      if (n === 5 && isNamespace(a) && isPodName(b) && isUid(c) && isContainer(d))
        return { kind: root, pod: { namespace: a, name: b, uid: c }, container: d };
      return undefined;
    case 'portForward':
      if (n === 3 && isNamespace(a) && isPodName(b)) return { kind: 'portForward', pod: { namespace: a, name: b } };
      if (n === 4 && isNamespace(a) && isPodName(b) && isUid(c))
        return { kind: 'portForward', pod: { namespace: a, name: b, uid: c } };
      return undefined;
    case 'logs': {
      // Names in /var/log are not Kubernetes names: any clean segments (no `.`, `..`, encoded slash).
      if (n === 1) return { kind: 'logs', path: rawPath.endsWith('/') ? '/' : '' };
      return { kind: 'logs', path: `/${seg.slice(1).join('/')}${rawPath.endsWith('/') ? '/' : ''}` };
    }
    default:
      return DEBUG_ROOTS.has(root!) ? { kind: 'unsupported-debug' } : undefined;
  }
}
