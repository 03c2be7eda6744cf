// A pod with an image volume (KEP-4639) on a node whose runtime cannot mount it as asked is refused,
// never run without the volume or with the image's root where it asked for a directory of it:
// PodFeatureUnsupported naming ImageVolume, the words of unhonoured-fields.ts (the kubelet's refusal of
// a pod that needs a feature the node does not declare), with the field path of each image volume, or,
// where the runtime mounts images but not their sub paths (containerd 2.1), of each subPath of an image
// volume's mount. Where the runtime can, the pod is admitted and the runtime mounts it.
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { formatPath, type PathPart } from '../config/field-path.js';
import {
  featureUnsupported,
  POD_FEATURE_UNSUPPORTED,
  unhonouredMessage,
  type UnhonouredField,
} from '../config/unhonoured-fields.js';
import type { AdmitResult, NodeFacts } from './node-facts.js';

const field = (path: PathPart[]): UnhonouredField => ({
  path: formatPath(path),
  reason: POD_FEATURE_UNSUPPORTED,
  message: featureUnsupported('ImageVolume'),
});

function subPathsOfImageVolumes(pod: Pod): PathPart[][] {
  const images = new Set((pod.spec?.volumes ?? []).filter((v) => v.image).map((v) => v.name));
  const of = (cs: readonly Container[] | undefined, kind: string): PathPart[][] =>
    (cs ?? []).flatMap((c, i) =>
      (c.volumeMounts ?? []).flatMap((m, j) =>
        images.has(m.name) && (m.subPath ?? '') !== '' ? [['spec', kind, i, 'volumeMounts', j, 'subPath']] : [],
      ),
    );
  return [...of(pod.spec?.initContainers, 'initContainers'), ...of(pod.spec?.containers, 'containers')];
}

export function imageVolumeRefusal(pod: Pod, node: NodeFacts): (AdmitResult & { readonly admit: false }) | undefined {
  const support = node.imageVolumes ?? { mounts: false, subPaths: false };
  const paths = !support.mounts
    ? (pod.spec?.volumes ?? []).flatMap((v, i) => (v.image ? [['spec', 'volumes', i, 'image']] : []))
    : !support.subPaths
      ? subPathsOfImageVolumes(pod)
      : [];
  if (paths.length === 0) return undefined;
  return { admit: false, reason: POD_FEATURE_UNSUPPORTED, message: unhonouredMessage(paths.map(field)) };
}
