// The kubelet's feature gates that bootlet implements at their Kubernetes 1.36 state. A gate that
// is GA is locked to its default there: a configuration setting it to the other value makes the
// kubelet refuse to start (component-base featuregate), and bootlet refuses it in the same words.

/** GA in 1.36, LockToDefault: true. */
export const LOCKED_FEATURE_GATES: Readonly<Record<string, boolean>> = {
  // KEP-2862: nodes/pods, nodes/healthz, nodes/configz (node-subresources.ts in src/server/auth).
  KubeletFineGrainedAuthz: true,
  // KEP-2258: /logs/?query= from the journal, with enableSystemLogQuery.
  NodeLogQuery: true,
};

/** The kubelet's error for the first gate set against its lock, or undefined. */
export function lockedFeatureGateProblem(gates: Readonly<Record<string, boolean>>): string | undefined {
  for (const [name, value] of Object.entries(gates)) {
    const locked = LOCKED_FEATURE_GATES[name];
    if (locked !== undefined && value !== locked)
      return `cannot set feature gate ${name} to ${String(value)}, feature is locked to ${String(locked)}`;
  }
  return undefined;
}

/** The gates without those set to their locked value: they change nothing, so they are not worth a warning. */
export function withoutLockedDefaults(gates: Readonly<Record<string, boolean>>): Record<string, boolean> {
  return Object.fromEntries(Object.entries(gates).filter(([name, value]) => LOCKED_FEATURE_GATES[name] !== value));
}
