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
import type { AdmitResult } from './node-facts.js';

export function nodeFeatureRefusal(
  pod: Pod,
  node: NodeFeatureFacts | undefined,
  features = NODE_FEATURES,
): (AdmitResult & { readonly admit: false }) | undefined {
  const missing = missingFeatures(pod, node, features).map((m) => m.feature);
  if (missing.length === 0) return undefined;
  // The kubelet's own check of a field comes first (podFeaturesAdmitHandler before the declared features).
  const own = missing.find((f) => f.refusal !== undefined);
  if (own) return { admit: false, ...featureRefusal(own) };
  const names = missing.map((f) => f.name).sort();
  return { admit: false, reason: POD_FEATURE_UNSUPPORTED, message: featuresUnavailableMessage(names) };
}
