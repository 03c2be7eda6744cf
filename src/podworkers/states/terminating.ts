// Stops a pod: app containers first (in parallel, each with the pod's grace period and its
// preStop hook), then init containers and sidecars, then the sandbox. Nothing is removed here;
// Terminated does that.
import { PodSandboxState } from '../../cri/cri-types.js';
import { isLiveContainer, type RuntimeContainer } from '../../kuberuntime/runtime-pods.js';
import { containerSpec, killContainer, podGraceSeconds, stopSandbox } from '../kill-container.js';
import { podForStep, type WorkerContext } from '../worker-context.js';
import { podState } from './pod-state.js';

async function stopAll(ctx: WorkerContext, containers: RuntimeContainer[], podIP: string | undefined): Promise<void> {
  await Promise.all(
    containers.map((c) => {
      const target = { id: c.id, name: c.name, spec: containerSpec(ctx.desired, c.name), meta: c.meta, podIP };
      return killContainer(ctx, target, podGraceSeconds(ctx, target), 'pod is terminating');
    }),
  );
}

export const terminating = podState({
  name: 'Terminating',
  next: ['Terminated'],
  async run(ctx) {
    ctx.emit((o) => o.podTerminating?.(ctx.uid));
    // A failure here (the runtime away, a stop that timed out) is retried by the worker's loop with
    // back-off; the pod stays in Terminating until everything of it has stopped.
    const { pod: rt } = await podForStep(ctx);
    const live = (rt?.containers ?? []).filter(isLiveContainer);
    const podIP = rt?.sandboxes[0]?.ip;
    await stopAll(
      ctx,
      live.filter((c) => c.meta.type !== 'init'),
      podIP,
    );
    await stopAll(
      ctx,
      live.filter((c) => c.meta.type === 'init'),
      podIP,
    );
    for (const s of rt?.sandboxes ?? []) {
      if (s.state === PodSandboxState.SANDBOX_READY) await stopSandbox(ctx, s.id);
    }
    // Nothing of it in the runtime (it never started: replaced or re-identified first): not worth an info line.
    (rt ? ctx.logger : ctx.logger.v(2)).info('Pod terminated', { pod: ctx.key, podUID: ctx.uid });
    return { next: 'Terminated' };
  },
});
