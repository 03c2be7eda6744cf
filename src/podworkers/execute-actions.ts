// Carries out one sync's actions against the runtime, in the kubelet's order: kill what must go,
// make the sandbox, start containers in spec order, then collect garbage. One container failing
// to start does not stop the others; the errors are returned for the pod's status.
import type { PodActions } from './compute-actions.js';
import { containerSpec, killContainer } from './kill-container.js';
import { ContainerStartError, type SandboxRef } from '../kuberuntime/pod-runtime.js';
import type { WorkerContext } from './worker-context.js';

export interface ExecutionResult {
  readonly errors: string[];
  readonly waiting: Map<string, { reason: string; message: string }>;
}

export async function executeActions(ctx: WorkerContext, actions: PodActions, sandbox: SandboxRef | undefined): Promise<ExecutionResult> {
  const pod = ctx.desired;
  const errors: string[] = [];
  const waiting = new Map(actions.waiting);
  const fields = { pod: ctx.key, podUID: ctx.uid };
  if (!pod) return { errors, waiting };
  const grace = pod.spec?.terminationGracePeriodSeconds ?? 30;

  await Promise.all(actions.kill.map((k) => killContainer(ctx, { id: k.id, name: k.name, spec: containerSpec(pod, k.name), podIP: sandbox?.ip }, k.graceSeconds ?? grace, k.why)));
  for (const id of actions.stopSandboxes) await ctx.runtime.stopSandbox(id);

  let current = sandbox;
  if (actions.createSandbox) {
    // The pod left the desired set while this sync waited (its file removed during a flood): no
    // sandbox for a pod nobody wants; its worker stops it next.
    if (ctx.terminationRequested) return { errors, waiting };
    current = await ctx.runtime.createSandbox(pod, actions.createSandbox.attempt);
    ctx.logger.info('Created pod sandbox', { ...fields, sandboxID: current.id, attempt: actions.createSandbox.attempt, reason: actions.createSandbox.why });
  }
  if (!current) return { errors, waiting };

  for (const c of actions.startCreated) {
    await ctx.runtime.startCreatedContainer(c.id);
    ctx.logger.info('Started container', { ...fields, container: c.name, containerID: c.id, reason: 'found created, not started' });
  }
  for (const s of actions.start) {
    // The pod is to go (its manifest removed or replaced): start nothing more, as the kubelet
    // cancels a sync in flight. A pod of 1,500 containers whose image cannot be pulled kept its
    // worker (and a replacement of the same name) waiting while each pull failed in turn.
    if (ctx.terminationRequested) break;
    const name = s.container.name;
    ctx.emit((o) => o.containerStartAttempt?.(ctx.uid, s.type));
    try {
      const started = await ctx.runtime.startContainer(pod, current, s.container, s.type, s.restartCount);
      ctx.pullBackOff.succeeded(ctx.uid, s.container.image ?? '');
      const pull = started.pullMs === undefined ? undefined : { pullMs: started.pullMs, pulledAtMs: ctx.now() };
      ctx.emit((o) => o.containerStarted?.(ctx.uid, s.type, pull));
      ctx.logger.info('Started container', { ...fields, container: name, containerID: started.id, reason: s.why });
      if (started.pullMs !== undefined) {
        ctx.event('Normal', 'Pulling', `Pulling image ${JSON.stringify(s.container.image)}`, name);
        ctx.event('Normal', 'Pulled', `Successfully pulled image ${JSON.stringify(s.container.image)} in ${(started.pullMs / 1000).toFixed(3)}s`, name);
      } else {
        ctx.event('Normal', 'Pulled', `Container image ${JSON.stringify(s.container.image)} already present on machine`, name);
      }
      ctx.event('Normal', 'Created', `Created container: ${name}`, name);
      ctx.event('Normal', 'Started', `Started container ${name}`, name);
    } catch (err) {
      const reason = err instanceof ContainerStartError ? err.reason : 'RunContainerError';
      const message = err instanceof Error ? err.message : String(err);
      waiting.set(name, { reason, message });
      if (err instanceof ContainerStartError && err.step === 'pull') ctx.pullBackOff.failed(ctx.uid, s.container.image ?? '', ctx.now(), message);
      ctx.emit((o) => o.containerStartFailed?.(ctx.uid, s.type, reason));
      errors.push(`${name}: ${message}`);
      ctx.logger.error('Failed to start container', { ...fields, container: name, reason, err: message });
      if (err instanceof ContainerStartError && err.step === 'mount') ctx.event('Warning', 'FailedMount', message, name);
      else ctx.event('Warning', 'Failed', `Error: ${reason}: ${message}`, name);
      // An init container must succeed before anything after it; stop here.
      if (s.type === 'init') break;
    }
  }

  for (const id of actions.removeContainers) await ctx.runtime.removeContainer(id);
  for (const id of actions.removeSandboxes) await ctx.runtime.removeSandbox(id);
  return { errors, waiting };
}
