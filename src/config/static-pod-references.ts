// What a static pod may not point at: API objects the agent would have to fetch from an API server
// that may not exist yet (it may be one of the static pods). The kubelet refuses these at parse time
// since v1.34 (PreventStaticPodAPIReferences) but names only the first one it meets; we name every
// reference with its field path.
import type { Container, EnvVar, EnvFromSource, PodSpec, Volume } from 'kubernetes-types/core/v1';
import { formatPath, type PathPart } from './field-path';

const refuse = (path: PathPart[], resource: string): string =>
  `${formatPath(path)}: static pods may not reference ${resource}`;

function envReferences(c: Container, base: PathPart[], out: string[]): void {
  (c.env ?? []).forEach((e: EnvVar, i) => {
    if (e.valueFrom?.secretKeyRef) out.push(refuse([...base, 'env', i, 'valueFrom', 'secretKeyRef'], 'secrets'));
    if (e.valueFrom?.configMapKeyRef)
      out.push(refuse([...base, 'env', i, 'valueFrom', 'configMapKeyRef'], 'configmaps'));
  });
  (c.envFrom ?? []).forEach((e: EnvFromSource, i) => {
    if (e.secretRef) out.push(refuse([...base, 'envFrom', i, 'secretRef'], 'secrets'));
    if (e.configMapRef) out.push(refuse([...base, 'envFrom', i, 'configMapRef'], 'configmaps'));
  });
}

/** In-tree volume types that carry a secretRef for their credentials. */
const SECRET_REF_VOLUMES = ['cephfs', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos'] as const;

function volumeReferences(v: Volume, base: PathPart[], out: string[]): void {
  if (v.secret) out.push(refuse(base, 'secrets'));
  if (v.configMap) out.push(refuse(base, 'configmaps'));
  if (v.persistentVolumeClaim) out.push(refuse(base, 'persistentvolumeclaims'));
  if (v.ephemeral) out.push(refuse(base, 'persistentvolumeclaims (via ephemeral volumes)'));
  if (v.csi) out.push(refuse(base, 'csidrivers (via CSI volumes)'));
  if (v.glusterfs) out.push(refuse(base, 'endpoints (via glusterfs volumes)'));
  if (v.azureFile) out.push(refuse(base, 'secrets (via azureFile volumes)'));
  const rec = v as unknown as Record<string, { secretRef?: unknown } | undefined>;
  for (const k of SECRET_REF_VOLUMES) if (rec[k]?.secretRef) out.push(refuse([...base, k, 'secretRef'], 'secrets'));
  (v.projected?.sources ?? []).forEach((s, i) => {
    const p = [...base, 'projected', 'sources', i];
    if (s.secret) out.push(refuse(p, 'secrets'));
    if (s.configMap) out.push(refuse(p, 'configmaps'));
    if (s.serviceAccountToken) out.push(refuse(p, 'serviceaccounts'));
    if (s.clusterTrustBundle) out.push(refuse(p, 'clustertrustbundles'));
    if (s.podCertificate) out.push(refuse(p, 'podcertificates'));
  });
}

/** One message per reference to an API object, each with its field path. */
export function staticPodReferenceErrors(spec: PodSpec): string[] {
  const out: string[] = [];
  const s: PathPart[] = ['spec'];
  if (spec.serviceAccountName) out.push(refuse([...s, 'serviceAccountName'], 'serviceaccounts'));
  // The deprecated alias of serviceAccountName still sets it when decoded.
  else if (spec.serviceAccount) out.push(refuse([...s, 'serviceAccount'], 'serviceaccounts'));
  (spec.imagePullSecrets ?? []).forEach((_, i) => out.push(refuse([...s, 'imagePullSecrets', i], 'secrets')));
  (spec.initContainers ?? []).forEach((c, i) => envReferences(c, [...s, 'initContainers', i], out));
  (spec.containers ?? []).forEach((c, i) => envReferences(c, [...s, 'containers', i], out));
  (spec.volumes ?? []).forEach((v, i) => volumeReferences(v, [...s, 'volumes', i], out));
  (spec.resourceClaims ?? []).forEach((_, i) => out.push(refuse([...s, 'resourceClaims', i], 'resourceclaims')));
  return out;
}
