// Finding a pod and one of its containers among the static pods this agent runs, as the kubelet's
// GetPodByName and validateContainerLogStatus do it: by namespace and name, the container in the
// spec, and which runtime instance a request means (the current one, or with `previous` the one
// before it), from the pod's last computed status.
import type { Container, ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import type { PodStatusEntry } from '../../status/status-manager.js';
import { HttpError } from './reply.js';
import type { PodRef } from './kubelet-path.js';
import { runtimeId } from '../../k8s/container-id.js';

export function findPod(entries: readonly PodStatusEntry[], ref: PodRef): PodStatusEntry {
  const e = entries.find((x) => x.pod.metadata?.namespace === ref.namespace && x.pod.metadata?.name === ref.name);
  if (!e) throw new HttpError(404, `pod "${ref.name}" does not exist`);
  if (ref.uid !== undefined && ref.uid !== e.uid)
    throw new HttpError(404, `pod "${ref.name}" with UID ${ref.uid} does not exist`);
  return e;
}

/** Ephemeral containers too: logs, exec and attach reach a debug container as any other. */
export function containerSpec(pod: Pod, name: string): Container | undefined {
  return [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []),
    ...(pod.spec?.ephemeralContainers ?? []),
  ].find((c) => c.name === name);
}

export function requireContainer(e: PodStatusEntry, name: string): Container {
  const c = containerSpec(e.pod, name);
  if (!c) throw new HttpError(404, `container "${name}" not found in pod "${e.pod.metadata?.name ?? ''}"`);
  return c;
}

function statusOf(e: PodStatusEntry, name: string): ContainerStatus | undefined {
  const s = e.status;
  return [
    ...(s.containerStatuses ?? []),
    ...(s.initContainerStatuses ?? []),
    ...(s.ephemeralContainerStatuses ?? []),
  ].find((c) => c.name === name);
}

/** The runtime container whose log is meant (validateContainerLogStatus); 400 with the kubelet's reason when there is none. */
export function logContainerId(e: PodStatusEntry, name: string, previous: boolean): string {
  const podName = e.pod.metadata?.name ?? '';
  const st = statusOf(e, name);
  if (!st) throw new HttpError(400, `container "${name}" in pod "${podName}" is not available`);
  const last = st.lastState?.terminated;
  const state = st.state ?? {};
  let id: string | undefined;
  if (previous) {
    id = runtimeId(last?.containerID);
    if (!id) throw new HttpError(400, `previous terminated container "${name}" in pod "${podName}" not found`);
    return id;
  }
  if (state.running) id = runtimeId(st.containerID);
  else if (state.terminated) id = runtimeId(state.terminated.containerID) ?? runtimeId(last?.containerID);
  else if (last) id = runtimeId(last.containerID);
  else if (state.waiting)
    throw new HttpError(
      400,
      `container "${name}" in pod "${podName}" is waiting to start: ${state.waiting.reason ?? 'ContainerCreating'}`,
    );
  if (!id) throw new HttpError(400, `container "${name}" in pod "${podName}" is terminated`);
  return id;
}

/** The newest running instance of a container (exec and attach need one). */
export function runningContainerId(e: PodStatusEntry, name: string): string {
  const st = statusOf(e, name);
  const id = st?.state?.running ? runtimeId(st.containerID) : undefined;
  if (!id) throw new HttpError(400, `container "${name}" in pod "${e.pod.metadata?.name ?? ''}" is not running`);
  return id;
}
