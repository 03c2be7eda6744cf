// What the status says of in-place resize (the kubelet's convertContainerStatusResources and its
// resize conditions): a running container's `allocatedResources` (its allocated requests) and
// `resources` (what the runtime applied, read back from its cgroup limits, in the allocation's
// words where they agree), PodResizePending while a resize waits or cannot be done here, and
// PodResizeInProgress from its allocation until the containers run with it (reason Error, with the
// runtime's words, when applying it failed).
import type { Container, ContainerStatus, PodCondition, ResourceRequirements } from 'kubernetes-types/core/v1';
import { ContainerState } from '../cri/cri-types.js';
import { milliCpuToQuota, milliCpuToShares, quotaToMilliCpu, sharesToMilliCpu } from '../cm/cpu-shares.js';
import type { DefaultedPod } from '../k8s/pod.js';
import { parseQuantity } from '../k8s/quantity.js';
import {
  isResizableContainer,
  POD_RESIZE_IN_PROGRESS,
  POD_RESIZE_PENDING,
  RESIZE_ERROR_REASON,
} from '../k8s/resize.js';
import type { AppliedResources, RuntimePod } from '../kuberuntime/runtime-pods.js';

/** A pod's resize as the allocation and the last attempt to apply it left it. */
export interface ResizeState {
  readonly pending?: { readonly reason: string; readonly message: string; readonly generation?: number };
  /** Applying the allocated resources failed with this, at the last attempt. */
  readonly error?: string;
}

type List = Record<string, string>;

const milli = (q: string | number | undefined): number => (q === undefined ? 0 : parseQuantity(q).milliValue());
const bytes = (q: string | number | undefined): number => (q === undefined ? 0 : parseQuantity(q).value());

/** The allocated resources in the API's words where the cgroup holds them, else the cgroup's own value. */
export function appliedResources(spec: Container, applied: AppliedResources): ResourceRequirements {
  const alloc = spec.resources ?? {};
  const req = (alloc.requests ?? {}) as List;
  const lim = (alloc.limits ?? {}) as List;
  const requests: List = {};
  const limits: List = {};
  const cpuReq = req.cpu ?? lim.cpu;
  if (cpuReq !== undefined || applied.cpuShares > 2)
    requests.cpu =
      cpuReq !== undefined && milliCpuToShares(milli(cpuReq)) === applied.cpuShares
        ? String(cpuReq)
        : `${sharesToMilliCpu(applied.cpuShares)}m`;
  // Memory requests are not in a cgroup: the allocation's (ephemeral storage likewise).
  for (const k of Object.keys(req)) if (k !== 'cpu') requests[k] = String(req[k]);
  const cpuLimit = quotaToMilliCpu(applied.cpuQuota, applied.cpuPeriod);
  if (cpuLimit > 0)
    limits.cpu =
      lim.cpu !== undefined && milliCpuToQuota(milli(lim.cpu), applied.cpuPeriod) === applied.cpuQuota
        ? String(lim.cpu)
        : `${cpuLimit}m`;
  if (applied.memoryLimitInBytes > 0)
    limits.memory =
      lim.memory !== undefined && bytes(lim.memory) === applied.memoryLimitInBytes
        ? String(lim.memory)
        : String(applied.memoryLimitInBytes);
  for (const k of Object.keys(lim)) if (k !== 'cpu' && k !== 'memory') limits[k] = String(lim[k]);
  const out: ResourceRequirements = {};
  if (Object.keys(limits).length > 0) out.limits = limits;
  if (Object.keys(requests).length > 0) out.requests = requests;
  return out;
}

/** Whether a running container's cgroup limits are not yet its allocation's (cpu request and limit, memory limit). */
function behind(spec: Container, applied: AppliedResources): boolean {
  const have = appliedResources(spec, applied);
  const want = spec.resources ?? {};
  const wReq = (want.requests ?? {}) as List;
  const wLim = (want.limits ?? {}) as List;
  const hReq = (have.requests ?? {}) as List;
  const hLim = (have.limits ?? {}) as List;
  return (
    milliCpuToShares(milli(wReq.cpu ?? wLim.cpu)) !== milliCpuToShares(milli(hReq.cpu)) ||
    milli(wLim.cpu) !== milli(hLim.cpu) ||
    bytes(wLim.memory) !== bytes(hLim.memory)
  );
}

function runningInstance(runtime: RuntimePod | undefined, name: string) {
  const sandbox = runtime?.sandboxes[0]?.id;
  return runtime?.containers.find(
    (c) => c.name === name && c.sandboxId === sandbox && c.state === ContainerState.CONTAINER_RUNNING,
  );
}

/** Sets allocatedResources and resources on the statuses of running resizable containers. */
export function addContainerResources(
  specs: readonly Container[],
  statuses: ContainerStatus[],
  runtime: RuntimePod | undefined,
  isInit: boolean,
): void {
  const bySpec = new Map(specs.map((c) => [c.name, c]));
  for (const s of statuses) {
    const spec = bySpec.get(s.name);
    if (!spec || !isResizableContainer(spec, isInit)) continue;
    const applied = runningInstance(runtime, s.name)?.resources;
    if (!applied) continue;
    const requests = spec.resources?.requests;
    if (requests && Object.keys(requests).length > 0)
      s.allocatedResources = Object.fromEntries(Object.entries(requests).map(([k, v]) => [k, String(v)]));
    s.resources = appliedResources(spec, applied);
  }
}

/** Some running container does not run with its allocation yet. */
export function resizeInProgress(pod: DefaultedPod, runtime: RuntimePod | undefined): boolean {
  const specs = [
    ...(pod.spec?.initContainers ?? []).filter((c) => isResizableContainer(c, true)),
    ...(pod.spec?.containers ?? []),
  ];
  return specs.some((c) => {
    const applied = runningInstance(runtime, c.name)?.resources;
    return applied !== undefined && behind(c, applied);
  });
}

/** PodResizePending and PodResizeInProgress, those that hold now (transition times are the caller's). */
export function resizeConditions(
  pod: DefaultedPod,
  runtime: RuntimePod | undefined,
  state: ResizeState | undefined,
): PodCondition[] {
  const out: PodCondition[] = [];
  const generation = pod.metadata.generation;
  const observed = (c: PodCondition, g: number | undefined): PodCondition =>
    g === undefined ? c : { ...c, observedGeneration: g };
  const pending = state?.pending;
  if (pending)
    out.push(
      observed(
        { type: POD_RESIZE_PENDING, status: 'True', reason: pending.reason, message: pending.message },
        pending.generation ?? generation,
      ),
    );
  if (!resizeInProgress(pod, runtime)) return out;
  out.push(
    observed(
      state?.error === undefined
        ? { type: POD_RESIZE_IN_PROGRESS, status: 'True' }
        : { type: POD_RESIZE_IN_PROGRESS, status: 'True', reason: RESIZE_ERROR_REASON, message: state.error },
      generation,
    ),
  );
  return out;
}
