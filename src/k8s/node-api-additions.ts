// The Node fields since kubernetes-types' last release (1.30) that bootlet writes, declared once and merged
// into kubernetes-types' declarations as pod-api-additions.ts does for the Pod (the Pod's manifest schema is
// generated from that file alone; a Node is never decoded from a manifest).

/** 1.35, KEP-5328 (NodeDeclaredFeatures, beta and on in 1.36). */
export interface NodeStatusAdditions {
  /** The declared features the node implements: sorted, unique, each `^[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*$`. */
  declaredFeatures?: string[];
  /** 1.31, KEP-3619: what the runtime as a whole supports (the kubelet's RuntimeFeatures setter). */
  features?: NodeFeatures;
}

/** 1.31, KEP-3619. */
export interface NodeFeatures {
  /** The runtime honours SupplementalGroupsPolicy (and reports ContainerStatus.user). */
  supplementalGroupsPolicy?: boolean;
}

/** 1.31, KEP-127 (UserNamespacesSupport). */
export interface NodeRuntimeHandlerFeaturesAdditions {
  userNamespaces?: boolean;
}

declare module 'kubernetes-types/core/v1' {
  interface NodeStatus extends NodeStatusAdditions {}
  interface NodeRuntimeHandlerFeatures extends NodeRuntimeHandlerFeaturesAdditions {}
}
