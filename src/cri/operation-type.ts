// The kubelet's names for CRI calls in kubelet_runtime_operations_* (its instrumented runtime and
// image services, pkg/kubelet/kuberuntime/instrumented_services.go): snake_case of the method,
// with "PodSandbox" written "podsandbox" and two names of their own.
const SPECIAL: Readonly<Record<string, string>> = {
  UpdateContainerResources: 'update_container',
  ImageFsInfo: 'image_fs_info',
};

export function operationType(method: string): string {
  const special = SPECIAL[method];
  if (special !== undefined) return special;
  return method
    .replace(/PodSandbox/g, 'Podsandbox')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();
}

/** Hears every unary CRI call: its method name, how long it took, and whether it failed. */
export type CriCallObserver = (method: string, durationMs: number, failed: boolean) => void;
