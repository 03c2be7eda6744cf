// The Node authorizer's graph, for the kinds bootlet reads: what a pod bound to a node refers to
// (graph_populator's edges: its service account, and the secrets and configmaps that
// podutil.VisitPodSecretNames / VisitPodConfigmapNames find), worked out from the store on each
// question rather than kept as a graph. Mirror pods give no edges, as AddPod short-circuits them.
import type { ObjectStore } from './store.js';
import { arr, isObject, meta, obj, str, type Json, type JsonObject } from './types.js';

export type GraphVertex = 'secret' | 'configmap' | 'serviceaccount';

const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

function containers(spec: JsonObject): JsonObject[] {
  return [...arr(spec.initContainers), ...arr(spec.containers), ...arr(spec.ephemeralContainers)].map(obj);
}

const nameOf = (v: Json | undefined): string => str(obj(v).name);

/** Every Secret name the pod spec refers to (VisitPodSecretNames). */
export function podSecretNames(spec: JsonObject): Set<string> {
  const out = new Set<string>();
  const add = (n: string): void => void (n && out.add(n));
  for (const s of arr(spec.imagePullSecrets)) add(nameOf(s));
  for (const c of containers(spec)) {
    for (const e of arr(c.envFrom)) add(nameOf(obj(e).secretRef));
    for (const e of arr(c.env)) add(nameOf(obj(obj(e).valueFrom).secretKeyRef));
  }
  for (const v of arr(spec.volumes).map(obj)) {
    add(str(obj(v.secret).secretName));
    for (const s of arr(obj(v.projected).sources)) add(nameOf(obj(s).secret));
    add(str(obj(v.azureFile).secretName));
    for (const k of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos'])
      if (isObject(v[k])) add(nameOf(obj(v[k]).secretRef));
    if (isObject(v.csi)) add(nameOf(obj(v.csi).nodePublishSecretRef));
  }
  return out;
}

/** Every ConfigMap name the pod spec refers to (VisitPodConfigmapNames). */
export function podConfigMapNames(spec: JsonObject): Set<string> {
  const out = new Set<string>();
  const add = (n: string): void => void (n && out.add(n));
  for (const c of containers(spec)) {
    for (const e of arr(c.envFrom)) add(nameOf(obj(e).configMapRef));
    for (const e of arr(c.env)) add(nameOf(obj(obj(e).valueFrom).configMapKeyRef));
  }
  for (const v of arr(spec.volumes).map(obj)) {
    add(nameOf(v.configMap));
    for (const s of arr(obj(v.projected).sources)) add(nameOf(obj(s).configMap));
  }
  return out;
}

/** Whether a pod bound to the node (in that namespace) has an edge to the object. */
export function hasPathFrom(
  store: ObjectStore,
  nodeName: string,
  vertex: GraphVertex,
  namespace: string,
  name: string,
): boolean {
  for (const pod of store.list('pods', namespace)) {
    const spec = obj(pod.spec);
    if (str(spec.nodeName) !== nodeName || MIRROR_ANNOTATION in meta(pod).annotations) continue;
    if (vertex === 'serviceaccount' && str(spec.serviceAccountName) === name) return true;
    if (vertex === 'secret' && podSecretNames(spec).has(name)) return true;
    if (vertex === 'configmap' && podConfigMapNames(spec).has(name)) return true;
  }
  return false;
}
