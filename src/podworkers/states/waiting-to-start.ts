// A new pod waits here while an older pod with the same name still runs or terminates, so that an
// edited manifest never has two versions running at once (same host ports, same data dir).
import { podState } from './pod-state.js';

export const waitingToStart = podState({
  name: 'WaitingToStart',
  next: ['Syncing', 'Terminating', 'Done'],
  async run(ctx) {
    // Nothing here touches the runtime: the first sync may start from the cache as it is.
    ctx.stepEffects = { kind: 'none' };
    if (ctx.termination !== undefined) {
      if (!ctx.neverInRuntime?.()) return { next: 'Terminating' };
      // Removed before its turn came, with nothing of it anywhere: no runtime read, no clean-up to do
      // (a flood's 2,000 such removals each read the runtime twice and cleaned empty directories).
      ctx.emit((o) => o.podTerminating?.(ctx.uid));
      // A stop that sets the pod's status (a preemption) says it even for a pod that never ran.
      if (ctx.termination?.status) await ctx.recordFinalStatus();
      ctx.backoff.forgetPod(ctx.uid);
      ctx.pullBackOff.forgetPod(ctx.uid);
      ctx.emit((o) => o.podRemoved?.(ctx.uid));
      ctx.logger.v(2).info('Pod removed before it started', { pod: ctx.key, podUID: ctx.uid });
      return { next: 'Done' };
    }
    if (!ctx.mayStart()) return { next: 'WaitingToStart' };
    ctx.logger.v(2).info('Pod may start', { pod: ctx.key, podUID: ctx.uid });
    return { next: 'Syncing' };
  },
});
