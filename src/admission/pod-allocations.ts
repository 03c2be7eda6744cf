// The resources allocated to each resized pod (the kubelet's allocation manager): what its workers
// run it with, which differs from its spec while a resize waits (Deferred) or cannot be done here
// (Infeasible), and the resize's pending state. A pod that was never resized has no entry: its spec
// is its allocation. Entries are kept in the kubelet's checkpoint, so a restarted agent runs a
// resized pod with what was allocated, not with a resize that never fitted.
import type { Container, ResourceRequirements } from 'kubernetes-types/core/v1';
import type { DefaultedPod } from '../k8s/pod.js';
import { isResizableContainer, type ResizePendingReason } from '../k8s/resize.js';
import { stableJson } from '../util/stable-json.js';
import type { Allocations, AllocationCheckpoint } from './allocation-checkpoint.js';

/** Why a resize waits, for the PodResizePending condition. */
export interface PendingResize {
  readonly reason: ResizePendingReason;
  readonly message: string;
  /** The pod's metadata.generation the decision was made for. */
  readonly generation?: number;
}

type ContainerAllocations = Readonly<Record<string, ResourceRequirements>>;

function resizable(pod: DefaultedPod): { c: Container; isInit: boolean }[] {
  return [
    ...(pod.spec?.initContainers ?? []).map((c) => ({ c, isInit: true })),
    ...(pod.spec?.containers ?? []).map((c) => ({ c, isInit: false })),
  ].filter(({ c, isInit }) => isResizableContainer(c, isInit));
}

/** The resources of the pod's resizable containers, by name. */
export function allocationOf(pod: DefaultedPod): ContainerAllocations {
  const out: Record<string, ResourceRequirements> = {};
  for (const { c } of resizable(pod)) out[c.name] = c.resources ?? {};
  return out;
}

const same = (a: ResourceRequirements | undefined, b: ResourceRequirements | undefined): boolean =>
  stableJson(a ?? {}) === stableJson(b ?? {});

export class PodAllocations {
  private readonly byUid = new Map<string, ContainerAllocations>();
  private readonly pendingByUid = new Map<string, PendingResize>();
  /** Allocated views already made, by desired pod object (a desired pod is replaced whole, never changed). */
  private views = new WeakMap<DefaultedPod, DefaultedPod>();

  constructor(private readonly checkpoint?: AllocationCheckpoint) {}

  /** Loads the checkpoint (once, before anything is admitted). */
  async restore(): Promise<void> {
    for (const [uid, a] of (await this.checkpoint?.load()) ?? []) this.byUid.set(uid, a);
  }

  has(uid: string): boolean {
    return this.byUid.has(uid);
  }

  /** The pod as it is to run: its containers' resources from its allocation, where it has one. */
  allocatedPod<P extends DefaultedPod>(pod: P): P {
    const a = this.byUid.get(pod.metadata.uid);
    const spec = pod.spec;
    if (!a || !spec) return pod;
    const cached = this.views.get(pod);
    if (cached) return cached as P;
    const swap = (c: Container): Container =>
      a[c.name] === undefined || same(a[c.name], c.resources) ? c : { ...c, resources: a[c.name] };
    const containers = spec.containers.map(swap);
    const initContainers = spec.initContainers?.map((c) => (c.restartPolicy === 'Always' ? swap(c) : c));
    const changed =
      containers.some((c, i) => c !== spec.containers[i]) ||
      (initContainers ?? []).some((c, i) => c !== spec.initContainers?.[i]);
    const view = changed
      ? { ...pod, spec: { ...spec, containers, ...(initContainers ? { initContainers } : {}) } }
      : pod;
    this.views.set(pod, view);
    return view;
  }

  /** Whether the pod's spec asks for other resources than it runs with. */
  differs(pod: DefaultedPod): boolean {
    const a = this.byUid.get(pod.metadata.uid);
    if (!a) return false;
    return resizable(pod).some(({ c }) => !same(a[c.name], c.resources));
  }

  /** Records what the pod runs with now (its first resize), or what a resize gives it; saves the checkpoint. */
  allocate(pod: DefaultedPod): Promise<void> {
    this.byUid.set(pod.metadata.uid, allocationOf(pod));
    this.views = new WeakMap();
    return this.save();
  }

  remove(uid: string): void {
    this.pendingByUid.delete(uid);
    if (this.byUid.delete(uid)) {
      this.views = new WeakMap();
      void this.save();
    }
  }

  pending(uid: string): PendingResize | undefined {
    return this.pendingByUid.get(uid);
  }

  /** Sets or clears the pending state; true when it changed. */
  setPending(uid: string, p: PendingResize | undefined): boolean {
    const before = this.pendingByUid.get(uid);
    if (p === undefined) return this.pendingByUid.delete(uid);
    this.pendingByUid.set(uid, p);
    return before?.reason !== p.reason || before.message !== p.message || before.generation !== p.generation;
  }

  /** The UIDs whose resize waits for room (Deferred). */
  deferred(): string[] {
    return [...this.pendingByUid].filter(([, p]) => p.reason === 'Deferred').map(([uid]) => uid);
  }

  private save(): Promise<void> {
    return this.checkpoint?.save(this.byUid as Allocations) ?? Promise.resolve();
  }
}
