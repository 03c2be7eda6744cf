// The kubelet's feature gates that bootlet knows, at their Kubernetes 1.36 defaults (pkg/features/kube_features.go
// at release-1.36, with the KEPs' milestones in kubernetes/enhancements). A gate that is GA and locked there is
// locked to its default: a configuration setting it to the other value makes the kubelet refuse to start
// (component-base featuregate), and bootlet refuses it in the same words. The others decide which node features
// a node declares (config/node-features.ts); setting one away from its default is not implemented.

/** GA in 1.36, LockToDefault: true. */
export const LOCKED_FEATURE_GATES: Readonly<Record<string, boolean>> = {
  // KEP-2862: nodes/pods, nodes/healthz, nodes/configz (node-subresources.ts in src/server/auth).
  KubeletFineGrainedAuthz: true,
  // KEP-2258: /logs/?query= from the journal, with enableSystemLogQuery.
  NodeLogQuery: true,
};

/** The 1.36 defaults of the gates of the node features a pod can need (and of NodeDeclaredFeatures itself). */
export const FEATURE_GATE_DEFAULTS: Readonly<Record<string, boolean>> = {
  ...LOCKED_FEATURE_GATES,
  // KEP-5328, beta in 1.36: status.declaredFeatures and the admission of pods against it.
  NodeDeclaredFeatures: true,
  // The declared features of 1.36 (nodedeclaredfeatures/features/registry.go): four beta, one alpha.
  ExtendWebSocketsToKubelet: true,
  InPlacePodLevelResourcesVerticalScaling: true,
  InPlacePodVerticalScalingInitContainers: true,
  RestartAllContainersOnContainerExits: true,
  UserNamespacesHostNetworkSupport: false,
  // Features every 1.36 kubelet has, by their gates: GA, beta (on) or alpha (off) in 1.36.
  ImageVolume: true,
  PodLevelResources: true,
  SupplementalGroupsPolicy: true,
  ContainerStopSignals: false,
  ContainerRestartRules: true,
  EnvFiles: true,
  DynamicResourceAllocation: true,
};

/** The gate's 1.36 default; a gate bootlet does not know is off. */
export function featureGateDefault(name: string): boolean {
  return FEATURE_GATE_DEFAULTS[name] ?? false;
}

/** The kubelet's error for the first gate set against its lock, or undefined. */
export function lockedFeatureGateProblem(gates: Readonly<Record<string, boolean>>): string | undefined {
  for (const [name, value] of Object.entries(gates)) {
    const locked = LOCKED_FEATURE_GATES[name];
    if (locked !== undefined && value !== locked)
      return `cannot set feature gate ${name} to ${String(value)}, feature is locked to ${String(locked)}`;
  }
  return undefined;
}

/** The gates without those set to their 1.36 default: they change nothing, so they are not worth a warning. */
export function withoutDefaultGates(gates: Readonly<Record<string, boolean>>): Record<string, boolean> {
  return Object.fromEntries(Object.entries(gates).filter(([name, value]) => FEATURE_GATE_DEFAULTS[name] !== value));
}
