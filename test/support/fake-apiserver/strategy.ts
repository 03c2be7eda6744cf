import { randomUUID } from 'node:crypto';
import { isCsr, prepareCsrForUpdate } from './certificates/csr-strategy.js';
import { apiVersionOf, type ResourceType } from './resources.js';
import { forbidden, invalid } from './status.js';
import { prepareEphemeralContainersUpdate } from './ephemeral-containers.js';
import { prepareResizeUpdate } from './pod-resize.js';
import { arr, deepCopy, isObject, jsonEqual, obj, str, type Json, type JsonObject, type KObject } from './types.js';

const PRIORITY_CLASSES: Record<string, number> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** What every create gets: identity, timestamps, type meta (as registry BeforeCreate does). */
export function prepareForCreate(rt: ResourceType, o: KObject): KObject {
  const out = deepCopy(o);
  out.apiVersion = apiVersionOf(rt);
  out.kind = rt.kind;
  const m = out.metadata;
  m.uid = randomUUID();
  m.creationTimestamp = now();
  delete m.deletionTimestamp;
  delete m.deletionGracePeriodSeconds;
  delete m.resourceVersion;
  delete m.selfLink;
  delete m.managedFields;
  if (!rt.namespaced) delete m.namespace;
  if (rt.resource === 'pods' && !rt.group) {
    admitPodPriority(rt, out);
    preparePodForCreate(out);
  }
  if (rt.resource === 'nodes') out.spec = { ...obj(out.spec) };
  if (rt.resource === 'namespaces') prepareNamespaceForCreate(out);
  return out;
}

/** The Priority admission plugin on create: a number of the client's own must be the class's value. */
function admitPodPriority(rt: ResourceType, pod: KObject): void {
  const spec = obj(pod.spec);
  const pc = str(spec.priorityClassName);
  if (pc && !(pc in PRIORITY_CLASSES))
    throw forbidden(rt, str(pod.metadata.name), `no PriorityClass with name ${pc} was found`);
  const computed = PRIORITY_CLASSES[pc] ?? 0;
  if (typeof spec.priority === 'number' && spec.priority !== computed)
    throw forbidden(
      rt,
      str(pod.metadata.name),
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${computed} from the given PriorityClass name`,
    );
  if (pc && typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== 'PreemptLowerPriority')
    throw forbidden(
      rt,
      str(pod.metadata.name),
      `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name`,
    );
}

function preparePodForCreate(pod: KObject): void {
  pod.metadata.generation = 1;
  const spec = defaultPodSpec(pod);
  pod.status = { phase: 'Pending', qosClass: qosClass(spec) };
}

/** Scheme defaulting: applied to every decoded pod, so a patch that drops a default gets it back. */
function defaultPodSpec(pod: KObject): JsonObject {
  const spec = obj(pod.spec);
  pod.spec = spec;
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  const pc = str(spec.priorityClassName);
  spec.priority ??= PRIORITY_CLASSES[pc] ?? 0;
  for (const list of [arr(spec.initContainers), arr(spec.containers), arr(spec.ephemeralContainers)])
    for (const c of list) if (isObject(c)) defaultContainer(c);
  return spec;
}

function defaultContainer(c: JsonObject): void {
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.resources ??= {};
  if (!c.imagePullPolicy) {
    const image = str(c.image);
    const tag = /:([^/:@]+)$/.exec(image.split('@')[0])?.[1];
    c.imagePullPolicy = image.includes('@') ? 'IfNotPresent' : !tag || tag === 'latest' ? 'Always' : 'IfNotPresent';
  }
}

/** Guaranteed / Burstable / BestEffort as qos.GetPodQOS decides, for cpu and memory. */
function qosClass(spec: JsonObject): string {
  let any = false;
  let guaranteed = true;
  for (const c of [...arr(spec.initContainers), ...arr(spec.containers)]) {
    const r = obj(obj(c).resources);
    const req = obj(r.requests);
    const lim = obj(r.limits);
    for (const res of ['cpu', 'memory']) {
      if (req[res] !== undefined || lim[res] !== undefined) any = true;
      const l = lim[res];
      const q = req[res] ?? l;
      if (l === undefined || String(q) !== String(l)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function prepareNamespaceForCreate(ns: KObject): void {
  const name = str(ns.metadata.name);
  ns.metadata.labels = { ...obj(ns.metadata.labels), 'kubernetes.io/metadata.name': name };
  ns.spec = { finalizers: ['kubernetes'] };
  ns.status = { phase: 'Active' };
}

const SYSTEM_META = [
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'namespace',
] as const;

/**
 * Carries over what a write may not change: the main resource keeps the old status (for kinds with a
 * status subresource), the status subresource keeps everything but status (and, for pods, metadata
 * the kubelet may touch).
 */
export function prepareForUpdate(rt: ResourceType, next: KObject, prev: KObject, subresource: string): KObject {
  const out = deepCopy(next);
  out.apiVersion = apiVersionOf(rt);
  out.kind = rt.kind;
  for (const f of SYSTEM_META) {
    if (f === 'uid' || f === 'creationTimestamp') continue; // checked by validateMetaUpdate
    if (prev.metadata[f] === undefined) delete out.metadata[f];
    else out.metadata[f] = prev.metadata[f] as Json;
  }
  out.metadata.uid ??= prev.metadata.uid as Json;
  out.metadata.creationTimestamp ??= prev.metadata.creationTimestamp as Json;
  delete out.metadata.managedFields;
  if (isCsr(rt)) {
    prepareCsrForUpdate(out, prev, subresource);
    return out;
  }
  const hasStatus = rt.subresources.includes('status');
  if (rt.resource === 'pods' && !rt.group && subresource === 'ephemeralcontainers') {
    const pod = prepareEphemeralContainersUpdate(rt, out, prev, defaultPodSpec);
    if (!jsonEqual(pod.spec, prev.spec))
      pod.metadata.generation = (typeof prev.metadata.generation === 'number' ? prev.metadata.generation : 1) + 1;
    return pod;
  }
  if (rt.resource === 'pods' && !rt.group && subresource === 'resize') {
    const pod = prepareResizeUpdate(rt, out, prev, defaultPodSpec, qosClass);
    if (!jsonEqual(pod.spec, prev.spec))
      pod.metadata.generation = (typeof prev.metadata.generation === 'number' ? prev.metadata.generation : 1) + 1;
    return pod;
  }
  if (subresource === 'status') {
    for (const k of Object.keys(out))
      if (k !== 'status' && k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') delete out[k];
    for (const k of Object.keys(prev))
      if (k !== 'status' && k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') out[k] = deepCopy(prev[k]);
    if (rt.resource === 'pods') {
      out.metadata.ownerReferences = deepCopy(prev.metadata.ownerReferences);
      // qosClass is set once at creation; a status write that drops it gets it back.
      const status = obj(out.status);
      if (!str(status.qosClass) && str(obj(prev.status).qosClass))
        out.status = { ...status, qosClass: str(obj(prev.status).qosClass) };
    }
    if (out.metadata.ownerReferences === undefined) delete out.metadata.ownerReferences;
  } else if (hasStatus) {
    if (prev.status === undefined) delete out.status;
    else out.status = deepCopy(prev.status);
  }
  if (rt.resource === 'pods' && !rt.group) defaultPodSpec(out);
  if (rt.resource === 'pods' && !rt.group && subresource === '') checkPodSpecUpdate(rt, out, prev);
  if (rt.resource === 'pods' && !jsonEqual(out.spec, prev.spec))
    out.metadata.generation = (typeof prev.metadata.generation === 'number' ? prev.metadata.generation : 1) + 1;
  return out;
}

const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

function checkPodSpecUpdate(rt: ResourceType, next: KObject, prev: KObject): void {
  const strip = (spec: Json | undefined): JsonObject => {
    const s = deepCopy(obj(spec));
    for (const list of ['containers', 'initContainers']) s[list] = arr(s[list]).map((c) => ({ ...obj(c), image: '' }));
    delete s.activeDeadlineSeconds;
    delete s.tolerations;
    return s;
  };
  if (!jsonEqual(strip(next.spec), strip(prev.spec)))
    throw invalid(rt, str(prev.metadata.name), [
      { type: 'FieldValueForbidden', field: 'spec', detail: `Forbidden: ${POD_UPDATE_FORBIDDEN}` },
    ]);
}
