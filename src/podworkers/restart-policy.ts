// Whether a finished container should run again, as the kubelet's ShouldContainerBeRestarted decides.
import type { Container } from 'kubernetes-types/core/v1';

export type PodRestartPolicy = 'Always' | 'OnFailure' | 'Never';

export function podRestartPolicy(policy: string | undefined): PodRestartPolicy {
  return policy === 'OnFailure' || policy === 'Never' ? policy : 'Always';
}

/** Sidecars are init containers with `restartPolicy: Always`: started in order, kept running. */
export function isSidecar(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

export function shouldRestart(policy: PodRestartPolicy, exitCode: number): boolean {
  if (policy === 'Always') return true;
  if (policy === 'OnFailure') return exitCode !== 0;
  return false;
}
