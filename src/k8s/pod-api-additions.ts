// The fields k8s.io/api's Pod gained after v1.30, the last release of kubernetes-types: their JSON
// names and types as core/v1/types.go declares them at v1.36.3 (test/fixtures/api/pod-fields-1.36.txt
// lists every field of every struct, test/unit/k8s/pod-api-fields.test.ts holds the schema made from it to that),
// each with the release that added it, its KEP and its feature gate.
//
// They are merged into kubernetes-types' interfaces below, so every part of bootlet reads them as
// ordinary fields; build/gen-pod-schema.mjs merges each `<Type>Additions` into `<Type>` of the
// manifest schema, so the decoder keeps them. A required field (no `?`) is one the API declares
// required. Whether bootlet honours each one is config/unhonoured-fields.ts's business, not this file's.
import type { Quantity } from 'kubernetes-types/api/resource';
import type { ResourceRequirements } from 'kubernetes-types/core/v1';

export interface PodSpecAdditions {
  /** 1.32, KEP-2837 (PodLevelResources): the resources the pod's containers share, sizing the pod cgroup. */
  resources?: ResourceRequirements;
  /** 1.34, KEP-4762 (HostnameOverride): the pod's hostname, in place of hostname, subdomain and setHostnameAsFQDN. */
  hostnameOverride?: string;
  /** 1.36, KEP-4671 (GenericWorkload): the scheduling group the pod belongs to. */
  schedulingGroup?: PodSchedulingGroup;
}

/** 1.36, KEP-4671. */
export interface PodSchedulingGroup {
  podGroupName?: string;
}

export interface VolumeAdditions {
  /** 1.31, KEP-4639 (ImageVolume): an OCI image or artifact mounted read-only. */
  image?: ImageVolumeSource;
}

/** 1.31, KEP-4639. */
export interface ImageVolumeSource {
  reference?: string;
  /** Always, Never or IfNotPresent; defaulted from the reference as a container's imagePullPolicy is. */
  pullPolicy?: string;
}

export interface VolumeProjectionAdditions {
  /** 1.34, KEP-4317 (PodCertificateRequest): a key and a certificate issued through a PodCertificateRequest. */
  podCertificate?: PodCertificateProjection;
}

/** 1.34, KEP-4317 (userAnnotations 1.35). */
export interface PodCertificateProjection {
  signerName: string;
  keyType: string;
  maxExpirationSeconds?: number;
  credentialBundlePath?: string;
  keyPath?: string;
  certificateChainPath?: string;
  userAnnotations?: Record<string, string>;
}

export interface ContainerAdditions {
  /** 1.34, KEP-5307 (ContainerRestartRules): restart (or not) on given exit codes, overriding restartPolicy. */
  restartPolicyRules?: ContainerRestartRule[];
}

/** EphemeralContainerCommon has the same field; validation forbids it there. */
export interface EphemeralContainerAdditions extends ContainerAdditions {}

/** 1.34, KEP-5307. */
export interface ContainerRestartRule {
  /** Restart (or, with RestartAllContainersOnContainerExits, RestartAllContainers). */
  action: string;
  exitCodes?: ContainerRestartRuleOnExitCodes;
}

/** 1.34, KEP-5307. */
export interface ContainerRestartRuleOnExitCodes {
  /** In or NotIn. */
  operator: string;
  values?: number[];
}

export interface LifecycleAdditions {
  /** 1.33, KEP-4960 (ContainerStopSignals): the signal that stops the container, in place of the image's. */
  stopSignal?: string;
}

export interface EnvVarSourceAdditions {
  /** 1.34, KEP-3721 (EnvFiles): a variable read from a key of an env file in an emptyDir volume. */
  fileKeyRef?: FileKeySelector;
}

/** 1.34, KEP-3721. */
export interface FileKeySelector {
  volumeName: string;
  path: string;
  key: string;
  optional?: boolean;
}

export interface PodSecurityContextAdditions {
  /** 1.31, KEP-3619 (SupplementalGroupsPolicy): Merge (the image's /etc/group too) or Strict. */
  supplementalGroupsPolicy?: string;
  /** 1.32, KEP-1710 (SELinuxChangePolicy): Recursive or MountOption relabelling of volumes. */
  seLinuxChangePolicy?: string;
}

export interface ResourceClaimAdditions {
  /** 1.31, KEP-4816 (DRAPrioritizedList): one request of the claim. */
  request?: string;
}

/** 1.31 (KEP-3063 v1beta1): the claim named directly, where 1.30 had `source`. */
export interface PodResourceClaimAdditions {
  resourceClaimName?: string;
  resourceClaimTemplateName?: string;
}

export interface PodStatusAdditions {
  /** 1.33, KEP-5067 (PodObservedGenerationTracking): the pod generation the status was written for. */
  observedGeneration?: number;
  /** 1.34, KEP-5004 (DRAExtendedResource). */
  extendedResourceClaimStatus?: PodExtendedResourceClaimStatus;
  /** 1.35, KEP-5419 (InPlacePodLevelResourcesVerticalScaling): the pod-level resources admitted. */
  allocatedResources?: Record<string, Quantity>;
  /** 1.35, KEP-5419: the pod-level resources applied. */
  resources?: ResourceRequirements;
  /** 1.36, KEP-5517 (DRANodeAllocatableResources). */
  nodeAllocatableResourceClaimStatuses?: NodeAllocatableResourceClaimStatus[];
}

/** 1.34, KEP-5004. */
export interface PodExtendedResourceClaimStatus {
  requestMappings: ContainerExtendedResourceRequest[];
  resourceClaimName: string;
}

/** 1.34, KEP-5004. */
export interface ContainerExtendedResourceRequest {
  containerName: string;
  resourceName: string;
  requestName: string;
}

/** 1.36, KEP-5517. */
export interface NodeAllocatableResourceClaimStatus {
  resourceClaimName: string;
  containers?: string[];
  resources: Record<string, Quantity>;
}

export interface PodConditionAdditions {
  /** 1.33, KEP-5067: the pod generation the condition was last set for. */
  observedGeneration?: number;
}

export interface ContainerStatusAdditions {
  /** 1.31, KEP-3619: the identities the container's first process runs with. */
  user?: ContainerUser;
  /** 1.31, KEP-4680 (ResourceHealthStatus): the health of the devices allocated to the container. */
  allocatedResourcesStatus?: ResourceStatus[];
  /** 1.33, KEP-4960: the signal the runtime stops the container with. */
  stopSignal?: string;
}

/** 1.31, KEP-3619. */
export interface ContainerUser {
  linux?: LinuxContainerUser;
}

/** 1.31, KEP-3619. */
export interface LinuxContainerUser {
  uid: number;
  gid: number;
  supplementalGroups?: number[];
}

/** 1.31, KEP-4680. */
export interface ResourceStatus {
  name: string;
  resources?: ResourceHealth[];
}

/** 1.31, KEP-4680 (message 1.36). */
export interface ResourceHealth {
  resourceID: string;
  /** Healthy, Unhealthy or Unknown. */
  health?: string;
  message?: string;
}

export interface VolumeMountStatusAdditions {
  /** 1.36, KEP-5365 (ImageVolumeWithDigest): what the volume resolved to. */
  volumeStatus?: VolumeStatus;
}

/** 1.36, KEP-5365. */
export interface VolumeStatus {
  image?: ImageVolumeStatus;
}

/** 1.36, KEP-5365. */
export interface ImageVolumeStatus {
  imageRef?: string;
}

// Merged into kubernetes-types' declarations (an interface with only an `extends` is the merge).
declare module 'kubernetes-types/core/v1' {
  interface PodSpec extends PodSpecAdditions {}
  interface Volume extends VolumeAdditions {}
  interface VolumeProjection extends VolumeProjectionAdditions {}
  interface Container extends ContainerAdditions {}
  interface EphemeralContainer extends EphemeralContainerAdditions {}
  interface Lifecycle extends LifecycleAdditions {}
  interface EnvVarSource extends EnvVarSourceAdditions {}
  interface PodSecurityContext extends PodSecurityContextAdditions {}
  interface ResourceClaim extends ResourceClaimAdditions {}
  interface PodResourceClaim extends PodResourceClaimAdditions {}
  interface PodStatus extends PodStatusAdditions {}
  interface PodCondition extends PodConditionAdditions {}
  interface ContainerStatus extends ContainerStatusAdditions {}
  interface VolumeMountStatus extends VolumeMountStatusAdditions {}
}
