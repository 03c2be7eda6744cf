// The Pod fields a 1.36 kubelet honours and bootlet does not (yet): a pod that sets one is refused,
// never run without it. Each is one rule below, with the field, why, and the words: the kubelet's own
// admission refusal where it has one for that field (PodLevelResourcesNotSupported,
// SupplementalGroupsPolicyNotSupported), otherwise its refusal of a pod that needs a node feature the
// node does not declare (PodFeatureUnsupported, KEP-5328), naming the feature by its gate. A rule goes
// when bootlet implements its field. The rules run after validation (the API server's words come
// first) and, for an API pod, after its volume kinds (one bootlet does not mount is a FailedMount
// there). An image volume (1.31, KEP-4639) is no rule here: whether it is honoured depends on the
// runtime (node/image-volume-support.ts), which admission knows (admission/image-volumes.ts refuses it
// in the words below).
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { formatPath, type PathPart } from './field-path';

/** The kubelet's PodFeatureUnsupported (lifecycle/handlers.go): a pod needs a feature the node does not declare. */
export const POD_FEATURE_UNSUPPORTED = 'PodFeatureUnsupported';
export const featureUnsupported = (gate: string): string =>
  `Pod requires node features that are not available: ${gate}`;

export interface UnhonouredField {
  /** The field path, as validation names it. */
  readonly path: string;
  /** The status reason the pod is refused with. */
  readonly reason: string;
  readonly message: string;
}

interface ContainerRef {
  readonly c: Container;
  readonly path: PathPart[];
}

function containersOf(pod: Pod): ContainerRef[] {
  const spec = pod.spec;
  return [
    ...(spec?.initContainers ?? []).map((c, i) => ({ c, path: ['spec', 'initContainers', i] })),
    ...(spec?.containers ?? []).map((c, i) => ({ c, path: ['spec', 'containers', i] })),
  ];
}

interface Rule {
  /** Where the rule finds its field set in a pod (paths), and what it says. */
  readonly find: (pod: Pod) => PathPart[][];
  readonly reason: string;
  readonly message: string;
}

const RULES: readonly Rule[] = [
  // 1.32, KEP-2837: the pod cgroup sized from the pod's own requests and limits (isPodLevelResourcesSupported).
  {
    find: (pod) => {
      const r = pod.spec?.resources;
      const set = Object.keys(r?.requests ?? {}).length + Object.keys(r?.limits ?? {}).length > 0;
      return set ? [['spec', 'resources']] : [];
    },
    reason: 'PodLevelResourcesNotSupported',
    message: 'PodLevelResources feature gate is disabled',
  },
  // 1.31, KEP-3619: Strict leaves out the image's /etc/group; the kubelet admits it only where the runtime
  // reports the feature (StatusResponse features.supplemental_groups_policy, the Node's
  // status.features.supplementalGroupsPolicy). Merge is what every runtime does. TODO: admit Strict once
  // the runtime's features are read (branch isolation) and passed on in the sandbox's security context.
  {
    find: (pod) =>
      pod.spec?.securityContext?.supplementalGroupsPolicy === 'Strict'
        ? [['spec', 'securityContext', 'supplementalGroupsPolicy']]
        : [],
    reason: 'SupplementalGroupsPolicyNotSupported',
    message: 'SupplementalGroupsPolicy=Strict is not supported in this node',
  },
  // 1.33, KEP-4960: ContainerConfig.stop_signal (CRI field 18); a runtime before containerd 2.1 ignores
  // it and stops with the image's signal, and bootlet cannot tell which it has.
  {
    find: (pod) =>
      containersOf(pod).flatMap(({ c, path }) =>
        c.lifecycle?.stopSignal ? [[...path, 'lifecycle', 'stopSignal']] : [],
      ),
    reason: POD_FEATURE_UNSUPPORTED,
    message: featureUnsupported('ContainerStopSignals'),
  },
  // 1.34, KEP-5307: restart (or not) on given exit codes; the pod workers know only the pod's restartPolicy.
  {
    find: (pod) =>
      containersOf(pod).flatMap(({ c, path }) =>
        (c.restartPolicyRules ?? []).length > 0 ? [[...path, 'restartPolicyRules']] : [],
      ),
    reason: POD_FEATURE_UNSUPPORTED,
    message: featureUnsupported('ContainerRestartRules'),
  },
  // 1.34, KEP-3721: a variable read from an env file an init container wrote into an emptyDir.
  {
    find: (pod) =>
      containersOf(pod).flatMap(({ c, path }) =>
        (c.env ?? []).flatMap((e, i) =>
          e.valueFrom?.fileKeyRef ? [[...path, 'env', i, 'valueFrom', 'fileKeyRef']] : [],
        ),
      ),
    reason: POD_FEATURE_UNSUPPORTED,
    message: featureUnsupported('EnvFiles'),
  },
  // KEP-3063 (GA 1.34; resourceClaimName and request 1.31): devices prepared by a DRA driver on the node,
  // which bootlet has no manager for. A static pod may not name claims at all (static-pod-references.ts).
  {
    find: (pod) => ((pod.spec?.resourceClaims ?? []).length > 0 ? [['spec', 'resourceClaims']] : []),
    reason: POD_FEATURE_UNSUPPORTED,
    message: featureUnsupported('DynamicResourceAllocation'),
  },
];

/** Every field of the pod that bootlet would not honour, in the rules' order. */
export function unhonouredFields(pod: Pod): UnhonouredField[] {
  return RULES.flatMap((r) => r.find(pod).map((p) => ({ path: formatPath(p), reason: r.reason, message: r.message })));
}

/** One line for all of them: `<path>: <message>`, joined with `; `. */
export function unhonouredMessage(fields: readonly UnhonouredField[]): string {
  return fields.map((f) => `${f.path}: ${f.message}`).join('; ');
}
