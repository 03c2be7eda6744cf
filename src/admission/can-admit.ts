// canAdmitPod: the kubelet's admit handlers in its order, over a pod, the node's facts and the other
// admitted pods; the first refusal is the one reported, with the kubelet's words. The eviction
// manager's (node pressure), the sysctl allowlist, the predicate handler (the OS checks first,
// preemption cannot help those; then the general filter: resources, required node affinity, node
// name, host ports, NoExecute taints; then the critical pod handler), AppArmor's, the node's
// declared features (image volumes: image-volumes.ts), the node shutdown manager's.
import type { Pod } from 'kubernetes-types/core/v1';
import { isCriticalPod, isStaticPod } from '../k8s/priority.js';
import {
  insufficientMessage,
  insufficientReason,
  insufficientResources,
  type InsufficientResource,
} from './fits-resources.js';
import { hostPortConflict } from './host-ports.js';
import type { AdmitResult, NodeFacts } from './node-facts.js';
import { matchesNodeName, matchesRequiredNodeAffinity, osFieldMismatch, osLabelMismatch } from './node-affinity.js';
import { evictionRefusal } from './eviction.js';
import { appArmorRefusal } from './apparmor.js';
import { imageVolumeRefusal } from './image-volumes.js';
import { podsToPreempt } from './preemption.js';
import { forbiddenSysctl } from './sysctls.js';
import { untoleratedNoExecuteTaint } from './taints.js';

/** sysctl.ForbiddenReason. */
export const SYSCTL_FORBIDDEN = 'SysctlForbidden';
/** The node shutdown manager's refusal (nodeShutdownNotAdmittedReason and its message). */
export const NODE_SHUTDOWN: AdmitResult & { readonly admit: false } = {
  admit: false,
  reason: 'NodeShutdown',
  message: 'Pod was rejected as the node is shutting down.',
};

/** A scheduler plugin's refusal: its name and reason (PredicateFailureError). */
interface PredicateFailure {
  readonly name: string;
  readonly desc: string;
}

type Failure = { readonly resource: InsufficientResource } | { readonly predicate: PredicateFailure };

export const NODE_AFFINITY: PredicateFailure = {
  name: 'NodeAffinity',
  desc: "node(s) didn't match Pod's node affinity/selector",
};
export const NODE_NAME: PredicateFailure = { name: 'NodeName', desc: "node(s) didn't match the requested node name" };
export const NODE_PORTS: PredicateFailure = {
  name: 'NodePorts',
  desc: "node(s) didn't have free ports for the requested pod ports",
};
export const TAINT_TOLERATION: PredicateFailure = {
  name: 'TaintToleration',
  desc: "node(s) had taints that the pod didn't tolerate",
};

export interface AdmitOptions {
  /**
   * The pod already runs (found in the runtime at start): the checks a restart must not turn into
   * a kill are skipped, as NotEvictPodOnKubeletRestart skips node affinity and taints.
   */
  readonly skipIgnorableChecks?: boolean;
}

/** What admission decided, with the pods to evict first when a critical pod preempts. */
export type AdmitDecision =
  (AdmitResult & { readonly admit: false }) | { readonly admit: true; readonly preempt: readonly Pod[] };

function generalFilter(pod: Pod, others: readonly Pod[], node: NodeFacts, skip: boolean): Failure[] {
  const out: Failure[] = insufficientResources(pod, others, node.allocatable).map((resource) => ({ resource }));
  if (!skip && !matchesRequiredNodeAffinity(pod, node.labels, node.name)) out.push({ predicate: NODE_AFFINITY });
  if (!matchesNodeName(pod, node.name)) out.push({ predicate: NODE_NAME });
  if (hostPortConflict(pod, others)) out.push({ predicate: NODE_PORTS });
  if (!skip && !isStaticPod(pod) && untoleratedNoExecuteTaint(node.taints, pod.spec?.tolerations ?? []))
    out.push({ predicate: TAINT_TOLERATION });
  return out;
}

function refusal(f: Failure): AdmitDecision {
  if ('resource' in f)
    return { admit: false, reason: insufficientReason(f.resource), message: insufficientMessage(f.resource) };
  return {
    admit: false,
    reason: f.predicate.name,
    message: `Predicate ${f.predicate.name} failed: ${f.predicate.desc}`,
  };
}

export function canAdmitPod(pod: Pod, others: readonly Pod[], node: NodeFacts, opts: AdmitOptions = {}): AdmitDecision {
  const evicted = evictionRefusal(pod, node.pressure);
  if (evicted) return evicted;
  const sysctl = forbiddenSysctl(pod, node.sysctls);
  if (sysctl !== undefined) return { admit: false, reason: SYSCTL_FORBIDDEN, message: sysctl };
  const d = predicateAdmit(pod, others, node, opts);
  // The kubelet asks AppArmor's handler and the shutdown manager after the predicate handler has
  // already killed the preemption's victims; here a pod refused in the end evicts nothing.
  if (!d.admit) return d;
  // A pod found running was admitted before (the kubelet checks only a Pending one).
  const appArmor = opts.skipIgnorableChecks === true ? undefined : appArmorRefusal(pod, node.appArmor);
  if (appArmor) return appArmor;
  const feature = imageVolumeRefusal(pod, node);
  if (feature) return feature;
  if (node.shuttingDown) return NODE_SHUTDOWN;
  return d;
}

/** The predicate admit handler with the critical pod admission handler behind it. */
function predicateAdmit(pod: Pod, others: readonly Pod[], node: NodeFacts, opts: AdmitOptions): AdmitDecision {
  if (osLabelMismatch(pod, node.labels))
    return {
      admit: false,
      reason: 'PodOSSelectorNodeLabelDoesNotMatch',
      message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    };
  if (osFieldMismatch(pod))
    return {
      admit: false,
      reason: 'PodOSNotSupported',
      message: "Failed to admit pod as the OS field doesn't match node OS",
    };
  const failures = generalFilter(pod, others, node, opts.skipIgnorableChecks === true);
  if (failures.length === 0) return { admit: true, preempt: [] };
  if (!isCriticalPod(pod)) return refusal(failures[0]!);
  // A critical pod is not refused for resources: it preempts, unless something else refuses it.
  const other = failures.filter((f) => 'predicate' in f);
  if (other.length > 0) return refusal(other[0]!);
  const lacking = generalFilter(pod, others, node, true).flatMap((f) => ('resource' in f ? [f.resource] : []));
  const r = podsToPreempt(pod, others, lacking);
  if ('error' in r)
    return {
      admit: false,
      reason: 'UnexpectedAdmissionError',
      message: `Unexpected error while attempting to recover from admission failure: ${r.error}`,
    };
  return { admit: true, preempt: r.victims };
}
