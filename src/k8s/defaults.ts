// The core/v1 scheme defaults the kubelet's decoder applies to a manifest (reference §1.6). They are
// applied before hashing, so two manifests that differ only in spelling out a default get the same
// UID, as in the kubelet.
import type {
  Container,
  HTTPGetAction,
  Pod,
  PodSpec,
  Probe,
  Volume,
  ObjectFieldSelector,
} from 'kubernetes-types/core/v1';

/** A projected service account token's lifetime when the pod names none (SetDefaults_ServiceAccountTokenProjection). */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

/** Kubernetes' DefaultMode for secret/configMap/downwardAPI/projected files: 0644. */
const DEFAULT_FILE_MODE = 0o644;

/**
 * v1.DefaultTerminationGracePeriodSeconds: the scheme sets it on every pod; the runtime falls back to
 * it for a pod it did not read through the scheme (an orphan with no grace annotation).
 */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

/** `Always` for `:latest` or an untagged, undigested reference; otherwise `IfNotPresent`. */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const lastColon = image.lastIndexOf(':');
  // A colon before the last slash is a registry port (`registry:5000/app`), not a tag.
  const tag = lastColon > lastSlash ? image.slice(lastColon + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultHttpGet(h: HTTPGetAction | undefined): void {
  if (!h) return;
  h.path ||= '/';
  h.scheme ||= 'HTTP';
}

function defaultProbe(p: Probe | undefined): void {
  if (!p) return;
  p.timeoutSeconds ||= 1;
  p.periodSeconds ||= 10;
  p.successThreshold ||= 1;
  p.failureThreshold ||= 3;
  defaultHttpGet(p.httpGet);
}

function defaultFieldRef(f: ObjectFieldSelector | undefined): void {
  if (f) f.apiVersion ||= 'v1';
}

function defaultContainer(c: Container, hostNetwork: boolean): void {
  if (c.image) c.imagePullPolicy ||= defaultImagePullPolicy(c.image);
  c.terminationMessagePath ||= '/dev/termination-log';
  c.terminationMessagePolicy ||= 'File';
  for (const p of c.ports ?? []) {
    p.protocol ||= 'TCP';
    if (hostNetwork && !p.hostPort) p.hostPort = p.containerPort;
  }
  const limits = c.resources?.limits;
  if (c.resources && limits && Object.keys(limits).length > 0) {
    const requests = (c.resources.requests ??= {});
    for (const [name, q] of Object.entries(limits)) if (!(name in requests)) requests[name] = q;
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  defaultHttpGet(c.lifecycle?.postStart?.httpGet);
  defaultHttpGet(c.lifecycle?.preStop?.httpGet);
  for (const e of c.env ?? []) defaultFieldRef(e.valueFrom?.fieldRef);
}

/**
 * The volume source keys the API knows, in the order the API server's validation meets them (the
 * first one set is the volume's type); a volume naming none of them is an emptyDir.
 */
export const VOLUME_SOURCES = [
  'emptyDir',
  'hostPath',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'flocker',
  'persistentVolumeClaim',
  'rbd',
  'cinder',
  'cephfs',
  'quobyte',
  'downwardAPI',
  'fc',
  'flexVolume',
  'configMap',
  'azureFile',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'azureDisk',
  'storageos',
  'projected',
  'scaleIO',
  'csi',
  'ephemeral',
  'image',
] as const;

function defaultVolume(v: Volume): void {
  const rec = v as unknown as Record<string, unknown>;
  if (!VOLUME_SOURCES.some((k) => rec[k] !== undefined && rec[k] !== null)) v.emptyDir = {};
  if (v.hostPath) v.hostPath.type ??= '';
  for (const src of [v.secret, v.configMap, v.downwardAPI, v.projected]) {
    if (src) src.defaultMode ??= DEFAULT_FILE_MODE;
  }
  for (const item of v.downwardAPI?.items ?? []) defaultFieldRef(item.fieldRef);
  for (const s of v.projected?.sources ?? []) {
    for (const item of s.downwardAPI?.items ?? []) defaultFieldRef(item.fieldRef);
    if (s.serviceAccountToken) s.serviceAccountToken.expirationSeconds ??= DEFAULT_TOKEN_EXPIRATION_SECONDS;
  }
  // An image volume (newer than kubernetes-types) pulls as a container image does.
  const image = (v as { image?: { reference?: string; pullPolicy?: string } }).image;
  if (image) image.pullPolicy ||= defaultImagePullPolicy(image.reference ?? '');
  // SetDefaults_AzureDiskVolumeSource: the disk kind decides what its URI must look like.
  if (v.azureDisk) {
    v.azureDisk.cachingMode ??= 'ReadWrite';
    v.azureDisk.fsType ??= 'ext4';
    v.azureDisk.readOnly ??= false;
    v.azureDisk.kind ??= 'Shared';
  }
}

function defaultSpec(spec: PodSpec): void {
  spec.restartPolicy ||= 'Always';
  spec.dnsPolicy ||= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  spec.securityContext ??= {};
  spec.schedulerName ||= 'default-scheduler';
  spec.enableServiceLinks ??= true;
  const hostNetwork = spec.hostNetwork === true;
  for (const c of spec.initContainers ?? []) defaultContainer(c, hostNetwork);
  for (const c of spec.containers ?? []) defaultContainer(c, hostNetwork);
  for (const v of spec.volumes ?? []) defaultVolume(v);
}

/** A defaulted copy; the input is not touched. */
export function applySchemeDefaults(pod: Pod): Pod {
  const out = structuredClone(pod);
  out.spec ??= { containers: [] };
  defaultSpec(out.spec);
  return out;
}
