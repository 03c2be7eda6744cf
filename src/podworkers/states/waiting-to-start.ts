// A new pod waits here while an older pod with the same name still runs or terminates, so that an
// edited manifest never has two versions running at once (same host ports, same data dir).
import { podState } from './pod-state.js';

export const waitingToStart = podState({
  name: 'WaitingToStart',
  next: ['Syncing', 'Terminating'],
  async run(ctx) {
    // Nothing here touches the runtime: the first sync may start from the cache as it is.
    ctx.stepEffects = { kind: 'none' };
    if (ctx.terminationRequested) return { next: 'Terminating' };
    if (!ctx.mayStart()) return { next: 'WaitingToStart' };
    ctx.logger.v(2).info('Pod may start', { pod: ctx.key, podUID: ctx.uid });
    return { next: 'Syncing' };
  },
});
