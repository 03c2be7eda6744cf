// An in-place resize in a sync's plan (the kubelet's computePodResizeAction): a running container
// whose applied cgroup limits (what the runtime reports) differ from its allocated resources is
// updated in place, or restarted where its resizePolicy for a changed resource says RestartContainer.
// The pod cgroup grows before its containers and shrinks after them, resource by resource.
import type { Container } from 'kubernetes-types/core/v1';
import type { LinuxContainerResources } from '../cri/cri-types.js';
import type { AppliedResources } from '../kuberuntime/runtime-pods.js';
import { resizeRestartPolicy, type ResizableResource } from '../k8s/resize.js';

/** One running container to update in place. */
export interface ContainerResize {
  readonly id: string;
  readonly name: string;
  /** The limits it is to have. */
  readonly wanted: LinuxContainerResources;
  /** The limits it has now. */
  readonly actual: AppliedResources;
  readonly changed: readonly ResizableResource[];
}

/** A CRI int64 as a number (the request type admits a Long; cgroup limits fit a double). */
const n = (v: number | string | { toString(): string } | undefined | null): number =>
  typeof v === 'number' ? v : Number(v === undefined || v === null ? 0 : v.toString());

/** The resources whose cgroup limits differ (cpu: shares, quota or period; memory: the limit). */
export function changedResources(actual: AppliedResources, wanted: LinuxContainerResources): ResizableResource[] {
  const out: ResizableResource[] = [];
  if (
    actual.cpuShares !== n(wanted.cpuShares) ||
    actual.cpuQuota !== n(wanted.cpuQuota) ||
    actual.cpuPeriod !== n(wanted.cpuPeriod)
  )
    out.push('cpu');
  if (actual.memoryLimitInBytes !== n(wanted.memoryLimitInBytes)) out.push('memory');
  return out;
}

/** Whether the container's policy restarts it for one of these changes. */
export function resizeNeedsRestart(spec: Container, changed: readonly ResizableResource[]): boolean {
  return changed.some((r) => resizeRestartPolicy(spec, r) === 'RestartContainer');
}

/**
 * Per resource, whether the pod's total limit grows (the pod cgroup is then set first): the sum of
 * the containers' wanted limits against what they have. An unlimited (0) one counts as growing.
 */
export function podGrows(resizes: readonly ContainerResize[]): Record<ResizableResource, boolean> {
  const grows = (wanted: (r: ContainerResize) => number, actual: (r: ContainerResize) => number): boolean => {
    let w = 0;
    let a = 0;
    for (const r of resizes) {
      if (wanted(r) <= 0) return true;
      w += wanted(r);
      a += actual(r) <= 0 ? Number.POSITIVE_INFINITY : actual(r);
    }
    return w >= a;
  };
  return {
    memory: grows(
      (r) => n(r.wanted.memoryLimitInBytes),
      (r) => r.actual.memoryLimitInBytes,
    ),
    cpu: grows(
      (r) => n(r.wanted.cpuQuota) || n(r.wanted.cpuShares),
      (r) => r.actual.cpuQuota || r.actual.cpuShares,
    ),
  };
}

/** The order of a resize's steps: memory first, then cpu; for each, the pod cgroup before its containers when it grows. */
export type ResizeStep =
  | { readonly kind: 'podCgroup'; readonly resource: ResizableResource }
  | { readonly kind: 'containers'; readonly resource: ResizableResource };

export function resizeSteps(resizes: readonly ContainerResize[]): ResizeStep[] {
  const grows = podGrows(resizes);
  const steps: ResizeStep[] = [];
  for (const resource of ['memory', 'cpu'] as const satisfies readonly ResizableResource[]) {
    if (!resizes.some((r) => r.changed.includes(resource))) continue;
    const pod = { kind: 'podCgroup', resource } as const;
    const containers = { kind: 'containers', resource } as const;
    steps.push(...(grows[resource] ? [pod, containers] : [containers, pod]));
  }
  return steps;
}

/**
 * What a container is sent at a step: memory's step changes only its memory limit (cpu as it has
 * it), cpu's step sends everything wanted, as the kubelet changes memory before cpu.
 */
export function resourcesAtStep(r: ContainerResize, step: ResizableResource): LinuxContainerResources {
  if (step === 'cpu') return r.wanted;
  return {
    ...r.wanted,
    cpuShares: r.actual.cpuShares,
    cpuQuota: r.actual.cpuQuota,
    cpuPeriod: r.actual.cpuPeriod,
  };
}
