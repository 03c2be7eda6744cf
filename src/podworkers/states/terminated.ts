// Removes what a terminated pod leaves behind: its containers, sandboxes, directories and logs.
import type { PodState } from '../worker-context.js';

export const terminated: PodState = {
  name: 'Terminated',
  async run(ctx) {
    const rt = await ctx.runtime.getPod(ctx.uid);
    for (const c of rt?.containers ?? []) await ctx.runtime.removeContainer(c.id);
    for (const s of rt?.sandboxes ?? []) await ctx.runtime.removeSandbox(s.id);
    await ctx.runtime.cleanupPod(ctx.uid, ctx.namespace, ctx.name);
    ctx.backoff.forgetPod(ctx.uid);
    ctx.emit((o) => o.podRemoved?.(ctx.uid));
    ctx.logger.info('Pod removed', { pod: ctx.key, podUID: ctx.uid });
    return { next: 'Done' };
  },
};
