// Required node affinity as GetRequiredNodeAffinity(pod).Match(node) reads it: the pod's
// nodeSelector (every pair must be a label of the node) and, if set, the required terms of its
// node affinity (any one term matching, every expression of that term matching). Also the node
// name check and the kubelet's `kubernetes.io/os` label check.
import type { NodeSelectorRequirement, NodeSelectorTerm, Pod } from 'kubernetes-types/core/v1';

function matchesLabelExpression(e: NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, e.key);
  const value = has ? labels[e.key]! : undefined;
  const values = e.values ?? [];
  switch (e.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      // One integer value, compared with the label's integer value; anything else does not match.
      if (value === undefined || values.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0]!))
        return false;
      const have = BigInt(value);
      const want = BigInt(values[0]!);
      return e.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

function matchesFieldExpression(e: NodeSelectorRequirement, nodeName: string): boolean {
  // metadata.name is the only node field a selector may name.
  if (e.key !== 'metadata.name') return false;
  const values = e.values ?? [];
  if (e.operator === 'In') return values.length === 1 && values[0] === nodeName;
  if (e.operator === 'NotIn') return values.length === 1 && values[0] !== nodeName;
  return false;
}

function termMatches(t: NodeSelectorTerm, labels: Readonly<Record<string, string>>, nodeName: string): boolean {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  // An empty term matches nothing.
  if (exprs.length === 0 && fields.length === 0) return false;
  return (
    exprs.every((e) => matchesLabelExpression(e, labels)) && fields.every((f) => matchesFieldExpression(f, nodeName))
  );
}

export function matchesRequiredNodeAffinity(
  pod: Pod,
  labels: Readonly<Record<string, string>>,
  nodeName: string,
): boolean {
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return required.nodeSelectorTerms.some((t) => termMatches(t, labels, nodeName));
}

/** nodename.Fits: a pod bound to another node does not fit this one. */
export function matchesNodeName(pod: Pod, nodeName: string): boolean {
  const want = pod.spec?.nodeName;
  return want === undefined || want === '' || want === nodeName;
}

const OS_LABEL = 'kubernetes.io/os';

/** rejectPodAdmissionBasedOnOSSelector: the pod's own `kubernetes.io/os` label against the node's (linux if unset). */
export function osLabelMismatch(pod: Pod, labels: Readonly<Record<string, string>>, nodeOS = 'linux'): boolean {
  const want = pod.metadata?.labels?.[OS_LABEL];
  if (want === undefined) return false;
  const have = labels[OS_LABEL] === nodeOS ? labels[OS_LABEL] : nodeOS;
  return want !== have;
}

/** rejectPodAdmissionBasedOnOSField. */
export function osFieldMismatch(pod: Pod, nodeOS = 'linux'): boolean {
  const os = pod.spec?.os?.name;
  return os !== undefined && os !== nodeOS;
}
