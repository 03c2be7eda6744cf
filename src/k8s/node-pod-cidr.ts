// The pod address ranges the controller manager assigns a Node: `spec.podCIDRs` (one per IP family), or
// the single `spec.podCIDR` an older server sets; the kubelet hands them to the runtime joined with ",".
import type { Node } from 'kubernetes-types/core/v1';

/** The Node's pod CIDRs joined with ",", or undefined while none is assigned. */
export function nodePodCIDRs(node: Node | undefined): string | undefined {
  const spec = node?.spec;
  const cidrs = spec?.podCIDRs?.length ? spec.podCIDRs : spec?.podCIDR ? [spec.podCIDR] : [];
  return cidrs.length > 0 ? cidrs.join(',') : undefined;
}
