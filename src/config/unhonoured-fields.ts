// The Pod fields a 1.36 kubelet honours and bootlet does not: a pod that sets one is refused, never run
// without it. The fields are the node features bootlet lacks whatever the runtime (node-features.ts: one
// list, each feature with the fields that ask for it and whether bootlet implements it), named by path, in
// the kubelet's words: its own admission refusal where it has one for that field
// (PodLevelResourcesNotSupported, SupplementalGroupsPolicyNotSupported), otherwise its refusal of a pod that
// needs a node feature the node does not have (PodFeatureUnsupported, KEP-5328). A feature the runtime
// decides, and a declared one (KEP-5328's own, which the kubelet's declaredFeaturesAdmitHandler refuses with
// no field path), are admission's to refuse (admission/node-features.ts). The rules run after validation (the API
// server's words come first) and, for an API pod, after its volume kinds (an image volume is a FailedMount
// there, as any volume kind bootlet does not mount).
import type { Pod } from 'kubernetes-types/core/v1';
import { formatPath } from './field-path';
import { featureRefusal, missingFeatures, type MissingFeature } from './node-features';

export interface UnhonouredField {
  /** The field path, as validation names it. */
  readonly path: string;
  /** The status reason the pod is refused with. */
  readonly reason: string;
  readonly message: string;
}

/** Every field of the pod that bootlet would not honour on any runtime, in the features' order. */
export function unhonouredFields(pod: Pod): UnhonouredField[] {
  return undeclaredFields(missingFeatures(pod, undefined));
}

/** The fields through which a pod needs the missing features no kubelet declares, each with its refusal. */
export function undeclaredFields(missing: readonly MissingFeature[]): UnhonouredField[] {
  return missing.flatMap(({ feature, paths }) => {
    if (feature.declared) return [];
    const { reason, message } = featureRefusal(feature);
    return paths.map((p) => ({ path: formatPath(p), reason, message }));
  });
}

/** One line for all of them: `<path>: <message>`, joined with `; `. */
export function unhonouredMessage(fields: readonly UnhonouredField[]): string {
  return fields.map((f) => `${f.path}: ${f.message}`).join('; ');
}
