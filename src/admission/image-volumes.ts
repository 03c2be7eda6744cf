// A pod with an image volume (KEP-4639) on a node whose runtime cannot mount images is refused, never
// run without the volume: PodFeatureUnsupported naming ImageVolume, the words of unhonoured-fields.ts
// (the kubelet's refusal of a pod that needs a feature the node does not declare), each image volume
// named by its field path. Where the runtime can, the pod is admitted and the runtime mounts it.
import type { Pod } from 'kubernetes-types/core/v1';
import { formatPath } from '../config/field-path.js';
import { featureUnsupported, POD_FEATURE_UNSUPPORTED, unhonouredMessage } from '../config/unhonoured-fields.js';
import type { AdmitResult, NodeFacts } from './node-facts.js';

export function imageVolumeRefusal(pod: Pod, node: NodeFacts): (AdmitResult & { readonly admit: false }) | undefined {
  if (node.runtimeMountsImages === true) return undefined;
  const fields = (pod.spec?.volumes ?? []).flatMap((v, i) =>
    v.image
      ? [
          {
            path: formatPath(['spec', 'volumes', i, 'image']),
            reason: POD_FEATURE_UNSUPPORTED,
            message: featureUnsupported('ImageVolume'),
          },
        ]
      : [],
  );
  if (fields.length === 0) return undefined;
  return { admit: false, reason: POD_FEATURE_UNSUPPORTED, message: unhonouredMessage(fields) };
}
