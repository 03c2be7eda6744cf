// Which containers the kubelet would start again, given what the runtime holds of them: only those
// may show a waiting reason (ShouldContainerBeRestarted in pkg/kubelet/container/helpers.go; the
// policy rules themselves, sidecars' included, are src/k8s/restart.ts).
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { ContainerState } from '../cri/cri-types.js';
import type { RuntimeContainer } from '../kuberuntime/runtime-pods.js';
import { containerShouldRestart } from '../k8s/restart.js';

export function shouldBeRestarted(
  pod: Pod,
  container: Container,
  newest: RuntimeContainer | undefined,
  terminating: boolean,
): boolean {
  if (terminating) return false;
  if (!newest) return true;
  if (newest.state === ContainerState.CONTAINER_RUNNING) return false;
  if (newest.state !== ContainerState.CONTAINER_EXITED) return true;
  return containerShouldRestart(container, pod.spec?.restartPolicy, newest.exitCode);
}
