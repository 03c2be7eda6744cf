// The events a change in one pod's runtime state implies: the kubelet's generic PLEG state table
// (pkg/kubelet/pleg/generic.go). Running → ContainerStarted, exited → ContainerDied, gone after
// running → ContainerDied then ContainerRemoved; a sandbox's change of state or removal is one
// SandboxChanged.
import { ContainerState } from '../cri/cri-types.js';
import type { RuntimePod } from '../kuberuntime/runtime-pods.js';
import type { PodLifecycleEvent } from './types.js';

export function podEvents(
  uid: string,
  before: RuntimePod | undefined,
  after: RuntimePod | undefined,
  oomKilled: (id: string) => boolean,
): PodLifecycleEvent[] {
  const events: PodLifecycleEvent[] = [];
  const prevSandboxes = new Map((before?.sandboxes ?? []).map((s) => [s.id, s.state]));
  const nextSandboxes = new Map((after?.sandboxes ?? []).map((s) => [s.id, s.state]));
  for (const [id, state] of nextSandboxes)
    if (prevSandboxes.get(id) !== state) events.push({ podUid: uid, type: 'SandboxChanged', id });
  for (const id of prevSandboxes.keys())
    if (!nextSandboxes.has(id)) events.push({ podUid: uid, type: 'SandboxChanged', id });

  const prev = new Map((before?.containers ?? []).map((c) => [c.id, c]));
  const next = new Map((after?.containers ?? []).map((c) => [c.id, c]));
  const died = (id: string, name: string): PodLifecycleEvent => ({
    podUid: uid,
    type: 'ContainerDied',
    id,
    name,
    ...(oomKilled(id) ? { oomKilled: true } : {}),
  });
  for (const [id, c] of next) {
    const was = prev.get(id)?.state;
    if (was === c.state) continue;
    if (c.state === ContainerState.CONTAINER_RUNNING)
      events.push({ podUid: uid, type: 'ContainerStarted', id, name: c.name });
    else if (c.state === ContainerState.CONTAINER_EXITED) events.push(died(id, c.name));
    else events.push({ podUid: uid, type: 'ContainerChanged', id, name: c.name });
  }
  for (const [id, c] of prev) {
    if (next.has(id)) continue;
    // Gone without being seen exited (removed between two reads): it died first.
    if (c.state !== ContainerState.CONTAINER_EXITED) events.push(died(id, c.name));
    events.push({ podUid: uid, type: 'ContainerRemoved', id, name: c.name });
  }
  return events;
}
