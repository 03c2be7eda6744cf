// Stops one container as the kubelet's killContainer does: the preStop hook first (its time counts
// against the grace period), then the runtime's stop signal and, after the rest of the grace, SIGKILL.
// The runtime reader hears of each stop while it is in flight (RuntimeReader.stopping), as of a pod's sandbox stop.
import type { Container, LifecycleHandler } from 'kubernetes-types/core/v1';
import type { RuntimeContainer } from '../kuberuntime/runtime-pods.js';
import type { DefaultedPod } from '../k8s/pod.js';
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from '../k8s/defaults.js';
import type { WorkerContext } from './worker-context.js';
import { errorMessage } from '../util/error-message.js';

/** The kubelet never gives a container less than this to stop. */
export const MIN_GRACE_SECONDS = 2;

export interface KillTarget {
  readonly id: string;
  readonly name: string;
  /** The pod's IP, for an httpGet preStop hook of a pod that is not host-network. */
  readonly podIP?: string;
  /** The spec of the running container, when known; otherwise rebuilt from its annotations. */
  readonly spec?: Container;
  readonly meta?: RuntimeContainer['meta'];
}

/** The spec of the container called `name`, init or app, if the pod has one. */
export function containerSpec(pod: DefaultedPod | undefined, name: string): Container | undefined {
  const spec = pod?.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].find((c) => c.name === name);
}

/** Grace for a pod-level stop: the termination request's override, else the pod's terminationGracePeriodSeconds, else the container's annotation, else the default (30). */
export function podGraceSeconds(ctx: WorkerContext, target: KillTarget): number {
  return (
    ctx.termination?.graceSeconds ??
    ctx.desired?.spec?.terminationGracePeriodSeconds ??
    target.meta?.terminationGracePeriodSeconds ??
    DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
  );
}

/** Stops a pod's sandbox, telling the runtime reader while the stop is in flight (RuntimeReader.stopping). */
export async function stopSandbox(ctx: WorkerContext, id: string): Promise<void> {
  const answered = ctx.cache.stopping(id);
  try {
    await ctx.teardown(() => ctx.runtime.stopSandbox(id));
  } finally {
    answered();
  }
}

export async function killContainer(
  ctx: WorkerContext,
  target: KillTarget,
  graceSeconds: number,
  reason: string,
): Promise<void> {
  const fields = { pod: ctx.key, podUID: ctx.uid, container: target.name, containerID: target.id };
  const preStop: LifecycleHandler | undefined = target.spec?.lifecycle?.preStop ?? target.meta?.preStop;
  let grace = graceSeconds;
  ctx.logger.info('Killing container', { ...fields, reason, gracePeriod: Math.max(MIN_GRACE_SECONDS, grace) });
  ctx.event(
    'Normal',
    'Killing',
    reason.startsWith('Container ') ? reason : `Stopping container ${target.name}`,
    target.name,
  );
  if (preStop) {
    const started = ctx.now();
    const spec: Container = target.spec ?? { name: target.name, ports: target.meta?.ports };
    try {
      await ctx.runtime.runHook(ctx.desired, spec, target.id, preStop, Math.max(1, grace), target.podIP);
    } catch (err) {
      const message = errorMessage(err);
      ctx.logger.warn('PreStop hook failed', { ...fields, err: message });
      ctx.event('Warning', 'FailedPreStopHook', `PreStopHook failed: ${message}`, target.name);
    }
    grace -= Math.ceil((ctx.now() - started) / 1000);
  }
  const answered = ctx.cache.stopping(target.id);
  try {
    await ctx.runtime.stopContainer(target.id, Math.max(MIN_GRACE_SECONDS, grace));
  } finally {
    answered();
  }
}
