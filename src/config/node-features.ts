// The node features a pod can need, each once: how a pod needs it (the fields that ask for it, by path) and
// whether bootlet implements it. Two kinds:
// - the features of the kubelet's Node Declared Features framework (KEP-5328, beta and on in 1.36:
//   component-helpers/nodedeclaredfeatures/features/registry.go at release-1.36). A node lists the ones it has
//   in status.declaredFeatures (sorted, as the kubelet's DiscoverNodeFeatures does: a feature whose gate is on
//   and that the node implements); the scheduler keeps a pod that needs one away from a node that does not
//   declare it, and the API server's NodeDeclaredFeatureValidator refuses an update (a resize) that needs one.
// - the features every kubelet of 1.36 has, so none declares them (a feature leaves the framework at GA), that
//   bootlet may lack: a pod that needs one is refused in the words of the kubelet's refusal of a pod that needs
//   an undeclared feature (PodFeatureUnsupported), or of its own check where it has one for that field.
// Flipping a feature to implemented is its `implemented` line: `true`, or a test of the runtime's facts when the
// runtime decides (the handler's features, its version). config/unhonoured-fields.ts refuses a pod at its source,
// naming the fields, for a feature of the second kind that is never implemented; admission
// (admission/node-features.ts) refuses it for a declared one, as the kubelet's declaredFeaturesAdmitHandler, and
// for one the runtime decides against; the Node's status.declaredFeatures is declaredFeatures() below.
import type { Container, NodeRuntimeHandler, Pod } from 'kubernetes-types/core/v1';
import { featureGateDefault } from '../k8s/feature-gates.js';
import { imageVolumeSupport } from '../node/image-volume-support.js';
import type { PathPart } from './field-path';

/** What the runtime says of itself that decides a feature. */
export interface NodeFeatureFacts {
  /** As the runtime names itself (`containerd://2.1.9`), the Node's nodeInfo.containerRuntimeVersion. */
  readonly runtimeVersion: string;
  /** The handlers and their features (status.runtimeHandlers); none before the runtime's first Status. */
  readonly runtimeHandlers: readonly NodeRuntimeHandler[];
  /** The runtime honours SupplementalGroupsPolicy (its Status features; the Node's status.features). */
  readonly supplementalGroupsPolicy?: boolean;
}

/** The kubelet's reason for a pod that needs a node feature the node lacks (lifecycle.PodFeatureUnsupported). */
export const POD_FEATURE_UNSUPPORTED = 'PodFeatureUnsupported';

/** The kubelet's message for those features (declaredFeaturesAdmitHandler): names joined with ", ". */
export function featuresUnavailableMessage(names: readonly string[]): string {
  return `Pod requires node features that are not available: ${names.join(', ')}`;
}

export interface NodeFeature {
  /** The feature's name: its feature gate's. */
  readonly name: string;
  /** The gate the refusal names, where it is not `name` (two entries of one gate). */
  readonly says?: string;
  /** In the kubelet's declared-features registry of 1.36 (listed in status.declaredFeatures when implemented). */
  readonly declared: boolean;
  /** Where a pod asks for it, as field paths; none for a feature only an update needs. */
  readonly needs: (pod: Pod) => PathPart[][];
  /** Whether bootlet implements it: always, never, or as the runtime's facts say. */
  readonly implemented: boolean | ((node: NodeFeatureFacts) => boolean);
  /** The kubelet's own refusal, where it has one for this field (otherwise PodFeatureUnsupported's). */
  readonly refusal?: { readonly reason: string; readonly message: string };
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

/** Each subPath of a mount of an image volume, init containers first. */
function subPathsOfImageVolumes(pod: Pod): PathPart[][] {
  const images = new Set((pod.spec?.volumes ?? []).filter((v) => v.image).map((v) => v.name));
  if (images.size === 0) return [];
  return containersOf(pod).flatMap(({ c, path }) =>
    (c.volumeMounts ?? []).flatMap((m, j) =>
      images.has(m.name) && (m.subPath ?? '') !== '' ? [[...path, 'volumeMounts', j, 'subPath']] : [],
    ),
  );
}

/** No field of a new pod asks for it: only an update (a resize) needs it, or the API server (streaming). */
const noPodField = (): PathPart[][] => [];

export const NODE_FEATURES: readonly NodeFeature[] = [
  // 1.31, KEP-4639 (GA 1.36): an OCI image mounted read-only; needs the runtime's image mounts (containerd 2.1).
  // The runtime decides (node/image-volume-support.ts, from its Version: the CRI has no feature for it).
  {
    name: 'ImageVolume',
    declared: false,
    needs: (pod) => (pod.spec?.volumes ?? []).flatMap((v, i) => (v.image ? [['spec', 'volumes', i, 'image']] : [])),
    implemented: (n) => imageVolumeSupport(n.runtimeVersion).mounts,
  },
  // A subPath of an image volume's mount (image_sub_path, 1.33): a runtime that mounts images but drops the
  // field (containerd 2.1) would show the image's root there. Where the runtime mounts no image at all, the
  // entry above already refuses the pod.
  {
    name: 'ImageVolumeSubPath',
    says: 'ImageVolume',
    declared: false,
    needs: subPathsOfImageVolumes,
    implemented: (n) => {
      const s = imageVolumeSupport(n.runtimeVersion);
      return !s.mounts || s.subPaths;
    },
  },
  // 1.32, KEP-2837: the pod cgroup sized from the pod's own requests and limits (isPodLevelResourcesSupported).
  {
    name: 'PodLevelResources',
    declared: false,
    needs: (pod) => {
      const r = pod.spec?.resources;
      const set = Object.keys(r?.requests ?? {}).length + Object.keys(r?.limits ?? {}).length > 0;
      return set ? [['spec', 'resources']] : [];
    },
    implemented: false,
    refusal: { reason: 'PodLevelResourcesNotSupported', message: 'PodLevelResources feature gate is disabled' },
  },
  // 1.31, KEP-3619 (GA 1.35): Strict leaves out the image's /etc/group; the kubelet admits it only where the
  // runtime reports the feature (StatusResponse features.supplemental_groups_policy, the Node's
  // status.features.supplementalGroupsPolicy), and passes it in the sandbox's and containers' security
  // context. Merge is what every runtime does.
  {
    name: 'SupplementalGroupsPolicy',
    declared: false,
    needs: (pod) =>
      pod.spec?.securityContext?.supplementalGroupsPolicy === 'Strict'
        ? [['spec', 'securityContext', 'supplementalGroupsPolicy']]
        : [],
    implemented: (n) => n.supplementalGroupsPolicy === true,
    refusal: {
      reason: 'SupplementalGroupsPolicyNotSupported',
      message: 'SupplementalGroupsPolicy=Strict is not supported in this node',
    },
  },
  // 1.33, KEP-4960 (alpha in 1.36): ContainerConfig.stop_signal (CRI field 18); a runtime before containerd 2.1
  // ignores it and stops with the image's signal.
  {
    name: 'ContainerStopSignals',
    declared: false,
    needs: (pod) =>
      containersOf(pod).flatMap(({ c, path }) =>
        c.lifecycle?.stopSignal ? [[...path, 'lifecycle', 'stopSignal']] : [],
      ),
    implemented: false,
  },
  // 1.34, KEP-5307 (beta and on in 1.35): restart (or not) on given exit codes, overriding restartPolicy.
  {
    name: 'ContainerRestartRules',
    declared: false,
    needs: (pod) =>
      containersOf(pod).flatMap(({ c, path }) =>
        (c.restartPolicyRules ?? []).length > 0 ? [[...path, 'restartPolicyRules']] : [],
      ),
    implemented: true,
  },
  // 1.34, KEP-3721 (beta 1.35): a variable read from an env file an init container wrote into an emptyDir.
  {
    name: 'EnvFiles',
    declared: false,
    needs: (pod) =>
      containersOf(pod).flatMap(({ c, path }) =>
        (c.env ?? []).flatMap((e, i) =>
          e.valueFrom?.fileKeyRef ? [[...path, 'env', i, 'valueFrom', 'fileKeyRef']] : [],
        ),
      ),
    implemented: false,
  },
  // KEP-3063 (GA 1.34; resourceClaimName and request 1.31): devices prepared by a DRA driver on the node, which
  // bootlet has no manager for. A static pod may not name claims at all (static-pod-references.ts).
  {
    name: 'DynamicResourceAllocation',
    declared: false,
    needs: (pod) => ((pod.spec?.resourceClaims ?? []).length > 0 ? [['spec', 'resourceClaims']] : []),
    implemented: false,
  },
  // The declared features of 1.36, by name.
  // KEP-4006 (beta and on in 1.36): the kubelet answers exec, attach and port-forward over WebSocket itself, so
  // the API server passes a client's WebSocket through instead of translating it to SPDY. bootlet relays the
  // runtime's streaming server, which does not speak v5.channel.k8s.io or WebSocket port-forward.
  { name: 'ExtendWebSocketsToKubelet', declared: true, needs: noPodField, implemented: false },
  // KEP-5419 (beta and on in 1.36): a resize of spec.resources; bootlet refuses pod-level resources at all.
  {
    name: 'InPlacePodLevelResourcesVerticalScaling',
    declared: true,
    needs: noPodField,
    implemented: false,
  },
  // KEP-1287 (beta and on in 1.36): a resize of a non-sidecar init container's resources.
  {
    name: 'InPlacePodVerticalScalingInitContainers',
    declared: true,
    needs: noPodField,
    implemented: false,
  },
  // KEP-5532 (beta and on in 1.36): a restart rule whose action restarts every container of the pod.
  {
    name: 'RestartAllContainersOnContainerExits',
    declared: true,
    needs: (pod) =>
      containersOf(pod).flatMap(({ c, path }) =>
        (c.restartPolicyRules ?? []).flatMap((r, i) =>
          r.action === 'RestartAllContainers' ? [[...path, 'restartPolicyRules', i, 'action']] : [],
        ),
      ),
    implemented: false,
  },
  // KEP-5607 (alpha, off in 1.36): a hostNetwork pod in a user namespace, where the runtime's handler says so.
  {
    name: 'UserNamespacesHostNetworkSupport',
    declared: true,
    needs: (pod) => (pod.spec?.hostNetwork === true && pod.spec.hostUsers === false ? [['spec', 'hostUsers']] : []),
    implemented: false,
  },
];

/** Whether the node has the feature now; `undefined` facts: only what no runtime decides. */
export function isImplemented(f: NodeFeature, node: NodeFeatureFacts | undefined): boolean {
  if (typeof f.implemented === 'boolean') return f.implemented;
  return node === undefined ? true : f.implemented(node);
}

/** status.declaredFeatures: the declared features the node has with their gates on, sorted. */
export function declaredFeatures(node: NodeFeatureFacts, features = NODE_FEATURES): string[] {
  // A declared feature whose gate is off is not declared, as the kubelet's Discover (src/k8s/feature-gates.ts).
  return features
    .filter((f) => f.declared && featureGateDefault(f.name) && isImplemented(f, node))
    .map((f) => f.name)
    .sort();
}

/** A feature the pod needs and the node lacks, with where the pod asks for it. */
export interface MissingFeature {
  readonly feature: NodeFeature;
  readonly paths: PathPart[][];
}

/**
 * The features the pod needs that the node lacks, in the list's order. Without facts, only those no runtime
 * can give (a manifest or an API pod judged at its source); with them, every one.
 */
export function missingFeatures(
  pod: Pod,
  node: NodeFeatureFacts | undefined,
  features = NODE_FEATURES,
): MissingFeature[] {
  return features.flatMap((feature) => {
    if (isImplemented(feature, node)) return [];
    const paths = feature.needs(pod);
    return paths.length > 0 ? [{ feature, paths }] : [];
  });
}

/** What the pod is refused with for a missing feature: the kubelet's own words, or PodFeatureUnsupported's. */
export function featureRefusal(f: NodeFeature): { reason: string; message: string } {
  return f.refusal ?? { reason: POD_FEATURE_UNSUPPORTED, message: featuresUnavailableMessage([f.says ?? f.name]) };
}
