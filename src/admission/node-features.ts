// The kubelet's declaredFeaturesAdmitHandler (and its pod features handler before it): a pod that needs a node
// feature this node lacks is refused, in the kubelet's words. The features and what decides them are
// config/node-features.ts's; here they are judged with the runtime's facts, so a feature the runtime decides
// (its handlers' features, its version) is refused where the runtime lacks it; without the runtime's facts (a pod
// found running) only what no runtime gives. A feature the kubelet does not declare and no runtime gives was
// already refused at the pod's source, field by field (config/unhonoured-fields.ts), with the same words.
import type { Pod } from 'kubernetes-types/core/v1';
import {
  featureRefusal,
  featuresUnavailableMessage,
  missingFeatures,
  NODE_FEATURES,
  POD_FEATURE_UNSUPPORTED,
  type NodeFeatureFacts,
} from '../config/node-features.js';
import { undeclaredFields, unhonouredMessage } from '../config/unhonoured-fields.js';
import type { AdmitResult } from './node-facts.js';

export function nodeFeatureRefusal(
  pod: Pod,
  node: NodeFeatureFacts | undefined,
  features = NODE_FEATURES,
): (AdmitResult & { readonly admit: false }) | undefined {
  const missing = missingFeatures(pod, node, features);
  if (missing.length === 0) return undefined;
  // The kubelet's own check of a field comes first (podFeaturesAdmitHandler before the declared features).
  const own = missing.find((m) => m.feature.refusal !== undefined);
  if (own) return { admit: false, ...featureRefusal(own.feature) };
  // One every kubelet of 1.36 has and this node's runtime lacks (an image volume on containerd 1.x) is named
  // field by field, as config/unhonoured-fields.ts names those no runtime gives, in the same words; the
  // declared ones as the kubelet's declaredFeaturesAdmitHandler names them.
  const byField = undeclaredFields(missing);
  const declared = missing.filter((m) => m.feature.declared).map((m) => m.feature.name);
  const words = [
    ...(byField.length > 0 ? [unhonouredMessage(byField)] : []),
    ...(declared.length > 0 ? [featuresUnavailableMessage(declared.sort())] : []),
  ];
  return { admit: false, reason: POD_FEATURE_UNSUPPORTED, message: words.join('; ') };
}
