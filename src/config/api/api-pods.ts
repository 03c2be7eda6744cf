// An API pod bound to this node as the desired set takes it: the object as the API server stored it
// (decoded, defaulted and validated there), its UID kept, `kubernetes.io/config.source: api`. Mirror
// pods are the API's picture of static pods, never API pods. Before anything in it names a path or
// an object on the node it goes through the rules a static pod does (validate-semantic.ts, without
// the static-pod restrictions): a pod whose name, namespace or UID fails them is refused outright
// (only told: there is nothing safe to report it under); one whose spec fails them is desired with
// its refusal, so admission reports it Failed with a Warning event, and it never starts half-way;
// a valid one that needs a volume kind bootlet does not mount (persistentVolumeClaim, the cloud and
// network kinds) is refused outright too, told as FailedMount: it may run once a later bootlet
// mounts it; one that sets a field bootlet does not honour (unhonoured-fields.ts) is desired with
// that refusal, in the kubelet's reason (PodFeatureUnsupported, PodLevelResourcesNotSupported, ...).
// An image volume is mounted by the runtime; admission refuses it where the runtime cannot.
import type { Pod } from 'kubernetes-types/core/v1';
import { applySchemeDefaults } from '../../k8s/defaults.js';
import { CONFIG_SEEN, CONFIG_SOURCE } from '../../k8s/annotations.js';
import { canonicalJson, formatRfc3339Nano } from '../identity';
import type { StaticPod } from '../types';
import { validatePodIdentity, validateSemantic } from '../validate-semantic';
import { unhonouredFields, unhonouredMessage } from '../unhonoured-fields';

/** The volume kinds the node part mounts today. */
const SUPPORTED_VOLUMES = new Set(['hostPath', 'emptyDir', 'configMap', 'secret', 'projected', 'downwardAPI', 'image']);
/** The projected sources it writes (not clusterTrustBundle, podCertificate). */
const SUPPORTED_PROJECTIONS = new Set(['configMap', 'secret', 'downwardAPI', 'serviceAccountToken']);
const SUPPORTED_TEXT =
  'bootlet mounts only hostPath, emptyDir, configMap, secret, projected, downwardAPI and image volumes';

/** `reason`: the event reason a refusal is told with. */
export type ApiPodResult =
  { readonly pod: StaticPod } | { readonly refused: string; readonly reason: 'FailedMount' | 'FailedValidation' };

/** A volume kind or projected source the node does not mount, in the API server's words. */
function unsupportedVolume(p: Pod): string | undefined {
  for (const [i, v] of (p.spec?.volumes ?? []).entries()) {
    const kinds = Object.keys(v).filter((k) => k !== 'name');
    const unsupported = kinds.find((k) => !SUPPORTED_VOLUMES.has(k));
    if (unsupported)
      return `spec.volumes[${i}].${unsupported}: Unsupported value: volume "${v.name}": ${SUPPORTED_TEXT}`;
    for (const [j, src] of (v.projected?.sources ?? []).entries()) {
      const kind = Object.keys(src).find((k) => !SUPPORTED_PROJECTIONS.has(k));
      if (kind)
        return `spec.volumes[${i}].projected.sources[${j}].${kind}: Unsupported value: volume "${v.name}": bootlet projects only configMap, secret, downwardAPI and serviceAccountToken sources`;
    }
  }
  return undefined;
}

/** Why the pod's spec cannot be used on the node, if it cannot. */
function refusalOf(p: Pod): StaticPod['refusal'] {
  // The server stored it defaulted; defaults again change nothing there, and fill in what a client that wrote it by hand left out.
  const problems = validateSemantic(applySchemeDefaults(p), p.metadata?.name, 'api');
  return problems.length > 0 ? { reason: 'FailedValidation', message: problems.join('; ') } : undefined;
}

/** A field the pod sets that bootlet does not honour: refused with the first one's reason, naming each. */
function unhonouredOf(p: Pod): StaticPod['refusal'] {
  const fields = unhonouredFields(p);
  return fields.length > 0 ? { reason: fields[0]!.reason, message: unhonouredMessage(fields) } : undefined;
}

/** The API pod as a desired pod (maybe with its refusal), or why it cannot even be that. */
export function toDesiredPod(p: Pod, nodeName: string, seen: Date): ApiPodResult {
  const meta = p.metadata ?? {};
  const { name, namespace, uid } = meta;
  if (!name || !namespace || !uid)
    return {
      refused: 'metadata.name, metadata.namespace and metadata.uid: Required value',
      reason: 'FailedValidation',
    };
  const identity = validatePodIdentity(meta, name);
  if (identity.length > 0) return { refused: identity.join('; '), reason: 'FailedValidation' };
  if (p.spec?.nodeName !== nodeName)
    return {
      refused: `spec.nodeName: Invalid value: "${p.spec?.nodeName ?? ''}": not this node`,
      reason: 'FailedValidation',
    };
  // Judged first: a pod the API server's rules refuse is Failed in their words, whatever it mounts.
  const invalid = refusalOf(p);
  const volume = invalid ? undefined : unsupportedVolume(p);
  if (volume !== undefined) return { refused: volume, reason: 'FailedMount' };
  const refusal = invalid ?? unhonouredOf(p);
  const annotations: Record<string, string> = {
    ...(meta.annotations ?? {}),
    [CONFIG_SOURCE]: 'api',
    [CONFIG_SEEN]: formatRfc3339Nano(seen),
  };
  const pod: StaticPod['pod'] = { ...p, metadata: { ...meta, name, namespace, uid, annotations } };
  return {
    pod: {
      pod,
      uid,
      key: `${namespace}/${name}`,
      file: `api:/api/v1/namespaces/${namespace}/pods/${name}`,
      uidPinned: true,
      ...(refusal ? { refusal } : {}),
    },
  };
}

/** What a worker acts on: the pod without its status and the server's bookkeeping (a status patch of ours is no change). */
function contentOf(sp: StaticPod): string {
  const { resourceVersion: _rv, managedFields: _mf, generation: _g, annotations, ...meta } = sp.pod.metadata;
  const { [CONFIG_SEEN]: _seen, ...rest } = annotations;
  return canonicalJson({ meta: { ...meta, annotations: rest }, spec: sp.pod.spec });
}

export function sameApiPod(a: StaticPod, b: StaticPod): boolean {
  return a === b || (a.uid === b.uid && contentOf(a) === contentOf(b));
}
