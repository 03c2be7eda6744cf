// What the PLEG last saw of every kubelet-labelled container and sandbox, and the events a new
// observation implies. The state table is the kubelet's generic PLEG (pkg/kubelet/pleg/generic.go):
// running → ContainerStarted, exited → ContainerDied, gone after running → ContainerDied then
// ContainerRemoved; a sandbox's change of state or removal is one SandboxChanged.
import type { RuntimePod } from '../kuberuntime/runtime-pods.js';
import { ContainerState, PodSandboxState } from '../cri/cri-types.js';
import type { PodLifecycleEvent } from './types.js';

export interface ObservedContainer {
  kind: 'container';
  id: string;
  podUid: string;
  name: string;
  state: ContainerState;
}

export interface ObservedSandbox {
  kind: 'sandbox';
  id: string;
  podUid: string;
  state: PodSandboxState;
}

export type Observed = ObservedContainer | ObservedSandbox;

export function isRunning(o: Observed): boolean {
  return o.kind === 'container' ? o.state === ContainerState.CONTAINER_RUNNING : o.state === PodSandboxState.SANDBOX_READY;
}

/** Everything in a relist, keyed by id. */
export function observeAll(pods: Map<string, RuntimePod>): Map<string, Observed> {
  const all = new Map<string, Observed>();
  for (const [podUid, pod] of pods) {
    for (const s of pod.sandboxes) all.set(s.id, { kind: 'sandbox', id: s.id, podUid, state: s.state });
    for (const c of pod.containers) all.set(c.id, { kind: 'container', id: c.id, podUid, name: c.name, state: c.state });
  }
  return all;
}

export class PodRecord {
  private seen = new Map<string, Observed>();
  /** Containers the runtime reported an OOM kill for; cleared when the container is gone. */
  private oom = new Set<string>();

  get(id: string): Observed | undefined {
    return this.seen.get(id);
  }

  markOomKilled(id: string): void {
    this.oom.add(id);
  }

  /** A full relist: replaces the record; the events of every object that changed, by pod. */
  replaceAll(next: Map<string, Observed>): PodLifecycleEvent[] {
    const events: PodLifecycleEvent[] = [];
    for (const o of next.values()) events.push(...this.diff(this.seen.get(o.id), o));
    for (const [id, prev] of this.seen) if (!next.has(id)) events.push(...this.diff(prev, undefined));
    this.seen = next;
    for (const id of this.oom) if (!next.has(id)) this.oom.delete(id);
    return events;
  }

  /** One object's new state, from a runtime event (CRI GetContainerEvents). */
  upsert(o: Observed): PodLifecycleEvent[] {
    const events = this.diff(this.seen.get(o.id), o);
    this.seen.set(o.id, o);
    return events;
  }

  remove(id: string): PodLifecycleEvent[] {
    const prev = this.seen.get(id);
    if (!prev) return [];
    this.seen.delete(id);
    const events = this.diff(prev, undefined);
    this.oom.delete(id);
    return events;
  }

  private diff(prev: Observed | undefined, next: Observed | undefined): PodLifecycleEvent[] {
    const o = next ?? prev;
    if (!o || prev?.state === next?.state) return [];
    if (o.kind === 'sandbox') return [{ podUid: o.podUid, type: 'SandboxChanged', id: o.id }];
    const base = { podUid: o.podUid, id: o.id, name: o.name };
    const died = { ...base, type: 'ContainerDied' as const, ...(this.oom.has(o.id) ? { oomKilled: true } : {}) };
    if (!next) {
      // Gone without being seen exited (removed between two relists): it died first.
      return prev!.state === ContainerState.CONTAINER_EXITED ? [{ ...base, type: 'ContainerRemoved' }] : [died, { ...base, type: 'ContainerRemoved' }];
    }
    if (next.state === ContainerState.CONTAINER_RUNNING) return [{ ...base, type: 'ContainerStarted' }];
    if (next.state === ContainerState.CONTAINER_EXITED) return [died];
    return [{ ...base, type: 'ContainerChanged' }];
  }
}
