// failCgroupV1 (KEP-5573): since Kubernetes 1.35 the kubelet refuses to start on a cgroup v1 host
// unless told otherwise, and warns at every start on one where it was told so.
import { isCgroup2UnifiedMode } from '../cm/cgroup-subsystems.js';

export class CgroupV1Error extends Error {
  override name = 'CgroupV1Error';
}

/** The kubelet's validation error, as `kubelet` prints it before it exits. */
export const CGROUP_V1_REFUSED =
  'failed to validate kubelet configuration, error: kubelet is configured to not run on a host using cgroup v1. ' +
  'cgroup v1 support is unsupported and will be removed in a future release';

/** The kubelet's warning on a cgroup v1 host it was allowed to run on. */
export const CGROUP_V1_WARNING =
  'cgroup v1 detected. cgroup v1 support is unsupported and will be removed in a future release. ' +
  'Please migrate to cgroup v2. More information at https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1';

/**
 * Throws on a cgroup v1 host while `failCgroupV1` holds; returns whether the host is cgroup v1 (and
 * so the warning is due).
 */
export function checkCgroupV1(failCgroupV1: boolean, unified: boolean = isCgroup2UnifiedMode()): boolean {
  if (unified) return false;
  if (failCgroupV1)
    throw new CgroupV1Error(
      `${CGROUP_V1_REFUSED} (set failCgroupV1: false in the KubeletConfiguration, or --fail-cgroupv1=false, to run on it anyway)`,
    );
  return true;
}
