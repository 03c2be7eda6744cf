// SupplementalGroupsPolicy=Strict (KEP-3619, GA in 1.35) on a node whose runtime does not honour it:
// the kubelet's predicate admit handler refuses the pod rather than run it with the image's groups
// merged in (rejectPodAdmissionBasedOnSupplementalGroupsPolicy, from the Node's
// status.features.supplementalGroupsPolicy, which the runtime's Status features set).
import type { Pod } from 'kubernetes-types/core/v1';
import type { AdmitResult, NodeFacts } from './node-facts.js';

/** lifecycle.SupplementalGroupsPolicyNotSupported and its message. */
export const SUPPLEMENTAL_GROUPS_POLICY_NOT_SUPPORTED: AdmitResult & { readonly admit: false } = {
  admit: false,
  reason: 'SupplementalGroupsPolicyNotSupported',
  message: 'SupplementalGroupsPolicy=Strict is not supported in this node',
};

export function supplementalGroupsPolicyRefusal(pod: Pod, node: NodeFacts): AdmitResult | undefined {
  const strict = pod.spec?.securityContext?.supplementalGroupsPolicy === 'Strict';
  return strict && node.supplementalGroupsPolicy !== true ? SUPPLEMENTAL_GROUPS_POLICY_NOT_SUPPORTED : undefined;
}
