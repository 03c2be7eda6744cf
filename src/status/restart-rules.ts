// Which containers the kubelet would start again: only those may show a waiting reason
// (ShouldContainerBeRestarted in pkg/kubelet/container/helpers.go).
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { ContainerState } from '../cri/cri-types.js';
import type { RuntimeContainer } from '../kuberuntime/runtime-pods.js';

/** A sidecar: an init container that keeps running beside the app containers. */
export function isRestartableInit(c: Container | undefined): boolean {
  return c?.restartPolicy === 'Always';
}

export function shouldBeRestarted(pod: Pod, container: Container, newest: RuntimeContainer | undefined, terminating: boolean): boolean {
  if (terminating) return false;
  if (!newest) return true;
  if (newest.state === ContainerState.CONTAINER_RUNNING) return false;
  if (newest.state !== ContainerState.CONTAINER_EXITED) return true;
  if (isRestartableInit(container)) return true;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && newest.exitCode === 0) return false;
  return true;
}
