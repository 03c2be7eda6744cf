// Stops a pod: app containers first (in parallel, each with the pod's grace period), then init
// containers and sidecars, then the sandbox. Nothing is removed here; Terminated does that.
import { ContainerState, PodSandboxState } from '../../runtime/cri-types.js';
import type { RuntimeContainer } from '../../runtime/runtime-pods.js';
import { errorRetryMs, type PodState, type WorkerContext } from '../worker-context.js';

const MIN_GRACE_SECONDS = 2;

function graceFor(ctx: WorkerContext, c: RuntimeContainer): number {
  const fromSpec = ctx.desired?.spec?.terminationGracePeriodSeconds;
  const grace = fromSpec ?? c.meta.terminationGracePeriodSeconds ?? 30;
  return Math.max(MIN_GRACE_SECONDS, grace);
}

async function stopAll(ctx: WorkerContext, containers: RuntimeContainer[]): Promise<void> {
  await Promise.all(
    containers.map(async (c) => {
      const grace = graceFor(ctx, c);
      ctx.logger.info('Killing container', { pod: ctx.key, podUID: ctx.uid, container: c.name, containerID: c.id, gracePeriod: grace });
      await ctx.runtime.stopContainer(c.id, grace);
    }),
  );
}

export const terminating: PodState = {
  name: 'Terminating',
  async run(ctx) {
    try {
      const rt = await ctx.runtime.getPod(ctx.uid);
      const live = (rt?.containers ?? []).filter((c) => c.state === ContainerState.CONTAINER_RUNNING || c.state === ContainerState.CONTAINER_CREATED);
      await stopAll(ctx, live.filter((c) => c.meta.type !== 'init'));
      await stopAll(ctx, live.filter((c) => c.meta.type === 'init'));
      for (const s of rt?.sandboxes ?? []) {
        if (s.state === PodSandboxState.SANDBOX_READY) await ctx.runtime.stopSandbox(s.id);
      }
      ctx.logger.info('Pod terminated', { pod: ctx.key, podUID: ctx.uid });
      return { next: 'Terminated' };
    } catch (err) {
      ctx.logger.error('Failed to terminate pod, will retry', { pod: ctx.key, podUID: ctx.uid, err: String(err) });
      return { next: 'Terminating', wakeAfterMs: errorRetryMs() };
    }
  },
};
