import { nodeIdentity, type UserInfo } from './authn.js';
import { admitNodeTokenRequest } from './node-restriction-token.js';
import type { ResourceType } from './resources.js';
import { ApiError, forbidden } from './status.js';
import type { ObjectStore } from './store.js';
import { arr, isObject, jsonEqual, meta, obj, str, type Json, type KObject } from './types.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  user: UserInfo;
  op: Operation;
  rt: ResourceType;
  subresource: string;
  namespace: string;
  name: string;
  object?: KObject;
  oldObject?: KObject;
}

const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** Label keys a kubelet may set on its own Node (kubeletapis.IsKubeletLabel). */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
  'node.kubernetes.io/windows-build',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/** The NodeRestriction admission plugin, for the resources bootlet touches. Undefined = admitted. */
export function admitNodeRequest(a: AdmissionAttributes, store: ObjectStore): ApiError | undefined {
  const { isNode, nodeName } = nodeIdentity(a.user);
  if (!isNode) return undefined;
  const deny = (why: string): ApiError => forbidden(a.rt, a.name, why);
  if (!nodeName) return deny(`could not determine node from user "${a.user.name}"`);
  if (a.rt.group === '' && a.rt.resource === 'pods') {
    if (a.subresource === '') return admitPod(a, nodeName, store, deny);
    if (a.subresource === 'status') return admitPodStatus(a, nodeName, deny);
    return deny(`unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
  }
  if (a.rt.group === '' && a.rt.resource === 'nodes') return admitNode(a, nodeName, deny);
  if (a.rt.group === '' && a.rt.resource === 'serviceaccounts' && a.op === 'CREATE' && a.subresource === 'token')
    return admitNodeTokenRequest(nodeName, a.namespace, a.object, store, deny, listerNotFound);
  if (a.rt.group === 'coordination.k8s.io' && a.rt.resource === 'leases') {
    if (a.namespace !== 'kube-node-lease')
      return deny('can only access leases in the "kube-node-lease" system namespace');
    const leaseName = a.op === 'CREATE' ? str(a.object?.metadata.name) : a.name;
    if (leaseName !== nodeName) return deny('can only access node lease with the same name as the requesting node');
  }
  return undefined;
}

type Deny = (why: string) => ApiError;

/** The plugin reads through informer listers, whose NotFound names the resource in the singular. */
function listerNotFound(resource: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource });
}

function admitPod(a: AdmissionAttributes, nodeName: string, store: ObjectStore, deny: Deny): ApiError | undefined {
  if (a.op === 'DELETE') {
    const existing = a.oldObject;
    if (!existing) return listerNotFound('pod', a.name);
    if (str(obj(existing.spec).nodeName) !== nodeName)
      return deny(`node "${nodeName}" can only delete pods with spec.nodeName set to itself`);
    return undefined;
  }
  if (a.op !== 'CREATE')
    return deny(`unexpected operation "${a.op}", node "${nodeName}" can only create and delete mirror pods`);
  const pod = a.object;
  if (!pod) return deny('unexpected type <nil>');
  if (!(MIRROR_ANNOTATION in meta(pod).annotations))
    return deny(`pod does not have "${MIRROR_ANNOTATION}" annotation, node "${nodeName}" can only create mirror pods`);
  const spec = obj(pod.spec);
  if (str(spec.nodeName) !== nodeName)
    return deny(`node "${nodeName}" can only create pods with spec.nodeName set to itself`);
  const owners = arr(pod.metadata.ownerReferences).map(obj);
  if (owners.length > 1)
    return deny(`node "${nodeName}" can only create pods with a single owner reference set to itself`);
  if (owners.length === 0) return deny(`node "${nodeName}" can only create pods with an owner reference set to itself`);
  const owner = owners[0];
  if (str(owner.apiVersion) !== 'v1' || str(owner.kind) !== 'Node' || str(owner.name) !== nodeName)
    return deny(`node "${nodeName}" can only create pods with an owner reference set to itself`);
  if (owner.controller !== true)
    return deny(`node "${nodeName}" can only create pods with a controller owner reference set to itself`);
  if (owner.blockOwnerDeletion === true)
    return deny(`node "${nodeName}" must not set blockOwnerDeletion on an owner reference`);
  const node = store.get('nodes', '', nodeName);
  if (!node) return listerNotFound('node', nodeName);
  if (str(owner.uid) !== meta(node).uid)
    return deny(`node ${nodeName} UID mismatch: expected ${str(owner.uid)} got ${meta(node).uid}`);
  if (str(spec.serviceAccountName) || str(spec.serviceAccount))
    return deny(`node "${nodeName}" can not create pods that reference a service account`);
  if (referencesSecrets(spec)) return deny(`node "${nodeName}" can not create pods that reference secrets`);
  if (referencesConfigMaps(spec)) return deny(`node "${nodeName}" can not create pods that reference configmaps`);
  const volumes = arr(spec.volumes).map(obj);
  if (volumes.some((v) => arr(obj(v.projected).sources).some((s) => isObject(obj(s).clusterTrustBundle))))
    return deny(`node "${nodeName}" can not create pods that reference clustertrustbundles`);
  if (volumes.some((v) => isObject(v.persistentVolumeClaim)))
    return deny(`node "${nodeName}" can not create pods that reference persistentvolumeclaims`);
  if (arr(spec.resourceClaims).length > 0)
    return deny(`node "${nodeName}" can not create pods that reference resourceclaims`);
  return undefined;
}

function allContainers(spec: Record<string, Json>): Record<string, Json>[] {
  return [...arr(spec.initContainers), ...arr(spec.containers), ...arr(spec.ephemeralContainers)].map(obj);
}

/** Any place a pod names a Secret (podutil.VisitPodSecretNames, the common cases). */
function referencesSecrets(spec: Record<string, Json>): boolean {
  if (arr(spec.imagePullSecrets).length > 0) return true;
  for (const c of allContainers(spec)) {
    if (arr(c.envFrom).some((e) => isObject(obj(e).secretRef))) return true;
    if (arr(c.env).some((e) => isObject(obj(obj(e).valueFrom).secretKeyRef))) return true;
  }
  for (const v of arr(spec.volumes).map(obj)) {
    if (isObject(v.secret)) return true;
    if (arr(obj(v.projected).sources).some((s) => isObject(obj(s).secret))) return true;
    for (const k of ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos', 'csi'])
      if (
        isObject(v[k]) &&
        (isObject(obj(v[k]).secretRef) || isObject(obj(v[k]).nodePublishSecretRef) || str(obj(v[k]).secretName))
      )
        return true;
  }
  return false;
}

function referencesConfigMaps(spec: Record<string, Json>): boolean {
  for (const c of allContainers(spec)) {
    if (arr(c.envFrom).some((e) => isObject(obj(e).configMapRef))) return true;
    if (arr(c.env).some((e) => isObject(obj(obj(e).valueFrom).configMapKeyRef))) return true;
  }
  for (const v of arr(spec.volumes).map(obj)) {
    if (isObject(v.configMap)) return true;
    if (arr(obj(v.projected).sources).some((s) => isObject(obj(s).configMap))) return true;
  }
  return false;
}

function admitPodStatus(a: AdmissionAttributes, nodeName: string, deny: Deny): ApiError | undefined {
  if (a.op !== 'UPDATE') return deny(`unexpected operation "${a.op}"`);
  const old = a.oldObject;
  const next = a.object;
  if (!old || !next) return deny('unexpected type <nil>');
  if (str(obj(old.spec).nodeName) !== nodeName)
    return deny(`node "${nodeName}" can only update pod status for pods with spec.nodeName set to itself`);
  if (!jsonEqual(meta(old).labels, meta(next).labels))
    return deny(`node "${nodeName}" cannot update labels through pod status`);
  if (!jsonEqual(obj(old.status).resourceClaimStatuses, obj(next.status).resourceClaimStatuses))
    return deny(`node "${nodeName}" cannot update resource claim statues`);
  return undefined;
}

function labelNamespace(key: string): string {
  const i = key.indexOf('/');
  return i < 0 ? '' : key.slice(0, i);
}

function forbiddenLabels(next: Record<string, string>, old: Record<string, string>): string[] {
  const changed = new Set<string>();
  for (const k of new Set([...Object.keys(next), ...Object.keys(old)])) if (next[k] !== old[k]) changed.add(k);
  const out: string[] = [];
  for (const k of changed) {
    const ns = labelNamespace(k);
    if (ns === 'node-restriction.kubernetes.io' || ns.endsWith('.node-restriction.kubernetes.io')) {
      out.push(k);
      continue;
    }
    const isK8s = ns === 'kubernetes.io' || ns.endsWith('.kubernetes.io') || ns === 'k8s.io' || ns.endsWith('.k8s.io');
    const kubeletOk = KUBELET_LABELS.has(k) || KUBELET_LABEL_NAMESPACES.some((p) => ns === p || ns.endsWith(`.${p}`));
    if (isK8s && !kubeletOk) out.push(k);
  }
  return out.sort();
}

function admitNode(a: AdmissionAttributes, nodeName: string, deny: Deny): ApiError | undefined {
  const requested = a.op === 'CREATE' ? str(a.object?.metadata.name) : a.name;
  if (requested !== nodeName) return deny(`node "${nodeName}" is not allowed to modify node "${requested}"`);
  const next = a.object;
  if (a.op === 'CREATE' && next) {
    if (isObject(obj(next.spec).configSource))
      return deny(`node "${nodeName}" is not allowed to create pods with a non-nil configSource`);
    const bad = forbiddenLabels(meta(next).labels, {});
    if (bad.length) return deny(`node "${nodeName}" is not allowed to set the following labels: ${bad.join(', ')}`);
  }
  if (a.op === 'UPDATE' && next && a.oldObject) {
    const old = a.oldObject;
    const cs = obj(next.spec).configSource;
    if (isObject(cs) && !jsonEqual(cs, obj(old.spec).configSource))
      return deny(`node "${nodeName}" is not allowed to update configSource to a new non-nil configSource`);
    if (!jsonEqual(arr(obj(next.spec).taints), arr(obj(old.spec).taints)))
      return deny(`node "${nodeName}" is not allowed to modify taints`);
    const bad = forbiddenLabels(meta(next).labels, meta(old).labels);
    if (bad.length) return deny(`is not allowed to modify labels: ${bad.join(', ')}`);
  }
  return undefined;
}
