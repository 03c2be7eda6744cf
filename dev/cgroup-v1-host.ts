// These machines boot cgroup v1. Since Kubernetes 1.35 (KEP-5573) the kubelet, and bootlet with it,
// refuses to start on such a host unless told it may (failCgroupV1: false), as an operator of a v1
// node must tell it: every agent the tests, bench, soak and `npm run up` start here is told so.
import { isCgroup2UnifiedMode } from '../src/cm/cgroup-subsystems.js';

export const HOST_IS_CGROUP_V1 = !isCgroup2UnifiedMode();

/** The flag an agent on this host needs: `--fail-cgroupv1=false` on cgroup v1, nothing on v2. */
export const CGROUP_V1_AGENT_ARGS: readonly string[] = HOST_IS_CGROUP_V1 ? ['--fail-cgroupv1=false'] : [];
