// The API server's pod-create rules that matter for a static pod, plus the static-pod restrictions.
// Every problem is collected (not just the first) so one edit can fix them all; each names its field,
// in the API server's words (validate/field-errors.ts, validate/api-formats.ts). An API pod is run
// through the same rules before anything in it names a path or an object on the node, without the
// static-pod restrictions: the API server took it, so only a server that lies (or a rule of ours
// stricter than its) makes one fail.
import type { Container, Pod, PodSpec } from 'kubernetes-types/core/v1';
import type { ObjectMeta } from 'kubernetes-types/meta/v1';
import type { PathPart } from './field-path';
import { staticPodReferenceErrors } from './static-pod-references';
import { VOLUME_SOURCES } from '../k8s/defaults.js';
import { isRestartableInit, RESTART_POLICIES } from '../k8s/restart.js';
import { isDNS1123Label, isDNS1123Subdomain, isValidPortName, isValidPortNum } from './validate/api-formats';
import { validateEnv, validateEnvFrom } from './validate/env-rules';
import { duplicate, forbidden, invalid, notFound, required, unsupported } from './validate/field-errors';
import { validateHandlers } from './validate/handler-rules';
import { validateAnnotations, validateLabels } from './validate/meta-rules';
import { validatePodSpecFields } from './validate/spec-rules';

const dnsLabel = (p: PathPart[], v: string, out: string[]): void => {
  for (const m of isDNS1123Label(v)) out.push(invalid(p, v, m));
};

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;
const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'] as const;
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'] as const;

/** The API server's validatePathNoBacksteps. */
function noBacksteps(p: PathPart[], v: string, out: string[]): void {
  if (v.split('/').includes('..')) out.push(invalid(p, v, "must not contain '..'"));
}

/** The API server's validateLocalDescendingPath (subPath, subPathExpr). */
function localDescendingPath(p: PathPart[], v: string, out: string[]): void {
  if (v.startsWith('/')) out.push(invalid(p, v, 'must be a relative path'));
  noBacksteps(p, v, out);
}

interface ContainerRef {
  readonly c: Container;
  readonly path: PathPart[];
  readonly init: boolean;
}

function validateContainer({ c, path, init }: ContainerRef, volumeNames: ReadonlySet<string>, out: string[]): void {
  if (!c.name) out.push(required([...path, 'name']));
  else dnsLabel([...path, 'name'], c.name, out);
  if (c.image === undefined || c.image.trim() === '') out.push(required([...path, 'image']));
  if (c.imagePullPolicy && !(PULL_POLICIES as readonly string[]).includes(c.imagePullPolicy)) out.push(unsupported([...path, 'imagePullPolicy'], c.imagePullPolicy, PULL_POLICIES));
  if (c.terminationMessagePolicy && !(TERMINATION_MESSAGE_POLICIES as readonly string[]).includes(c.terminationMessagePolicy)) {
    out.push(unsupported([...path, 'terminationMessagePolicy'], c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES));
  }
  out.push(...validateEnv(c.env, [...path, 'env']), ...validateEnvFrom(c.envFrom, [...path, 'envFrom']));
  out.push(...validateHandlers(c, path, init && c.restartPolicy !== 'Always'));
  if (c.restartPolicy !== undefined) {
    if (!init) out.push(forbidden([...path, 'restartPolicy'], 'may not be set for non-init containers'));
    else if (c.restartPolicy !== 'Always') out.push(unsupported([...path, 'restartPolicy'], c.restartPolicy, ['Always']));
  }
  const portNames = new Set<string>();
  (c.ports ?? []).forEach((port, i) => {
    const pp = [...path, 'ports', i];
    if (!port.containerPort) out.push(required([...pp, 'containerPort']));
    else for (const m of isValidPortNum(port.containerPort)) out.push(invalid([...pp, 'containerPort'], port.containerPort, m));
    if (port.hostPort) for (const m of isValidPortNum(port.hostPort)) out.push(invalid([...pp, 'hostPort'], port.hostPort, m));
    if (port.protocol !== undefined && !(PROTOCOLS as readonly string[]).includes(port.protocol)) {
      out.push(unsupported([...pp, 'protocol'], port.protocol, PROTOCOLS));
    }
    if (port.name !== undefined && port.name !== '') {
      const problems = isValidPortName(port.name);
      for (const m of problems) out.push(invalid([...pp, 'name'], port.name, m));
      if (problems.length > 0) return;
      if (portNames.has(port.name)) out.push(duplicate([...pp, 'name'], port.name));
      portNames.add(port.name);
    }
  });
  const mountPaths = new Set<string>();
  (c.volumeMounts ?? []).forEach((m, i) => {
    const mp = [...path, 'volumeMounts', i];
    if (!m.name) out.push(required([...mp, 'name']));
    else if (!volumeNames.has(m.name)) out.push(notFound([...mp, 'name'], m.name));
    if (!m.mountPath) out.push(required([...mp, 'mountPath']));
    else if (mountPaths.has(m.mountPath)) out.push(invalid([...mp, 'mountPath'], m.mountPath, 'must be unique'));
    else mountPaths.add(m.mountPath);
    if (m.subPath) localDescendingPath([...mp, 'subPath'], m.subPath, out);
    if (m.subPathExpr) {
      if (m.subPath) out.push(invalid([...mp, 'subPathExpr'], m.subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      localDescendingPath([...mp, 'subPathExpr'], m.subPathExpr, out);
    }
  });
}

/** Host ports of containers that run at the same time (regular ones and sidecars) may not collide. */
function validateHostPorts(refs: readonly ContainerRef[], out: string[]): void {
  const seen = new Set<string>();
  for (const { c, path, init } of refs) {
    if (init && !isRestartableInit(c)) continue;
    (c.ports ?? []).forEach((port, i) => {
      if (!port.hostPort) return;
      const key = `${port.protocol ?? 'TCP'}/${port.hostIP ?? ''}/${port.hostPort}`;
      if (seen.has(key)) out.push(duplicate([...path, 'ports', i, 'hostPort'], key));
      seen.add(key);
    });
  }
}

/** Whose rules: a static pod's (the API server's plus the static-pod restrictions), or an API pod's (the API server's alone). */
export type PodKind = 'static' | 'api';

function validateVolumes(spec: PodSpec, kind: PodKind, out: string[]): Set<string> {
  const names = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    const vp: PathPart[] = ['spec', 'volumes', i];
    if (!v.name) out.push(required([...vp, 'name']));
    else {
      const before = out.length;
      dnsLabel([...vp, 'name'], v.name, out);
      if (out.length === before && names.has(v.name)) out.push(duplicate([...vp, 'name'], v.name));
      names.add(v.name);
    }
    if (v.hostPath) {
      const hp: PathPart[] = [...vp, 'hostPath'];
      const p = v.hostPath.path;
      if (!p) out.push(required([...hp, 'path']));
      else {
        // The API server accepts a relative path (resolved against the runtime's working
        // directory on the node); bootlet refuses it in a manifest, with the API server's words for
        // nfs.path. An API pod's fails to mount instead (volumes.ts): the server took it.
        if (kind === 'static' && !p.startsWith('/')) out.push(invalid([...hp, 'path'], p, 'must be an absolute path'));
        noBacksteps([...hp, 'path'], p, out);
        const t = v.hostPath.type;
        if (t !== undefined && t !== null && !(HOST_PATH_TYPES as readonly string[]).includes(t)) out.push(unsupported([...hp, 'type'], t, HOST_PATH_TYPES));
      }
    }
    const rec = v as unknown as Record<string, unknown>;
    const sources = VOLUME_SOURCES.filter((k) => rec[k] !== undefined && rec[k] !== null);
    if (sources.length > 1) out.push(forbidden(vp, `may not specify more than 1 volume type (found ${sources.join(', ')})`));
  });
  return names;
}

/**
 * The pod's name, namespace and pinned UID: what names its directories, its runtime objects and
 * its API paths. `podName` as for validateSemantic.
 */
export function validatePodIdentity(meta: ObjectMeta, podName: string | undefined): string[] {
  const out: string[] = [];
  if (!meta.name) out.push(required(['metadata', 'name'], 'name is needed for the pod'));
  else if (podName !== undefined) for (const m of isDNS1123Subdomain(podName)) out.push(invalid(['metadata', 'name'], podName, m));
  // A pinned UID (an API pod's is the server's) names directories (pod dir, log dir) and runtime objects: it must be path-safe.
  if (meta.uid !== undefined && !/^[0-9A-Za-z-]{1,36}$/.test(meta.uid)) {
    out.push(invalid(['metadata', 'uid'], meta.uid, 'a pinned uid must be 1 to 36 characters of letters, digits and "-" (a UUID or 32 hex digits)'));
  }
  if (meta.namespace) dnsLabel(['metadata', 'namespace'], meta.namespace, out);
  return out;
}

/**
 * All problems with a scheme-defaulted pod, as one-line messages with field paths.
 * `podName` is the name after the node suffix (a static pod's; an API pod's own): that is the name
 * that must be a valid subdomain.
 */
export function validateSemantic(pod: Pod, podName: string | undefined, kind: PodKind = 'static'): string[] {
  const meta = pod.metadata ?? {};
  const out = validatePodIdentity(meta, podName);
  out.push(...validateLabels(meta.labels, ['metadata', 'labels']), ...validateAnnotations(meta.annotations, ['metadata', 'annotations']));
  const spec = pod.spec;
  if (!spec) return [...out, required(['spec'])];
  if (spec.hostname) dnsLabel(['spec', 'hostname'], spec.hostname, out);
  if (spec.subdomain) dnsLabel(['spec', 'subdomain'], spec.subdomain, out);
  out.push(...validatePodSpecFields(spec));
  if (!(RESTART_POLICIES as readonly string[]).includes(spec.restartPolicy ?? '')) {
    out.push(unsupported(['spec', 'restartPolicy'], spec.restartPolicy, RESTART_POLICIES));
  }
  if (kind === 'static' && spec.ephemeralContainers && spec.ephemeralContainers.length > 0) {
    out.push(forbidden(['spec', 'ephemeralContainers'], 'ephemeral containers are not allowed in static pods'));
  }
  const volumeNames = validateVolumes(spec, kind, out);
  if (!spec.containers || spec.containers.length === 0) out.push(required(['spec', 'containers']));
  const refs: ContainerRef[] = [
    ...(spec.initContainers ?? []).map((c, i) => ({ c, path: ['spec', 'initContainers', i], init: true })),
    ...(spec.containers ?? []).map((c, i) => ({ c, path: ['spec', 'containers', i], init: false })),
  ];
  // An API pod's ephemeral containers name log directories and runtime containers too (and are unique among all).
  const ephemeral: ContainerRef[] = kind === 'api' ? (spec.ephemeralContainers ?? []).map((c, i) => ({ c: c as Container, path: ['spec', 'ephemeralContainers', i], init: false })) : [];
  const containerNames = new Set<string>();
  for (const ref of [...refs, ...ephemeral]) {
    validateContainer(ref, volumeNames, out);
    if (ref.c.name) {
      if (containerNames.has(ref.c.name)) out.push(duplicate([...ref.path, 'name'], ref.c.name));
      containerNames.add(ref.c.name);
    }
  }
  validateHostPorts(refs, out);
  if (kind === 'static') out.push(...staticPodReferenceErrors(spec));
  return out;
}
