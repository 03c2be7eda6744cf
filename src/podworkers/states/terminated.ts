// Removes what a terminated pod leaves behind: its containers, sandboxes, directories and logs.
// Any step may fail (the runtime restarting, a deadline, "device or resource busy"): what can be
// removed is removed, and the worker's loop retries the rest with back-off until it is all gone.
import { ContainerState, PodSandboxState } from '../../cri/cri-types.js';
import { keepsStoppedContainers } from '../termination-request.js';
import { podForStep } from '../worker-context.js';
import { podState } from './pod-state.js';
import { errorMessage } from '../../util/error-message.js';

export const terminated = podState({
  name: 'Terminated',
  next: ['Terminating', 'Done'],
  async run(ctx) {
    const { pod: rt } = await podForStep(ctx);
    // Something runs again (a stop that did not take, a container started behind our back): stop it first.
    const live =
      (rt?.containers ?? []).some((c) => c.state === ContainerState.CONTAINER_RUNNING) ||
      (rt?.sandboxes ?? []).some((s) => s.state === PodSandboxState.SANDBOX_READY);
    if (live) return { next: 'Terminating' };
    // Stopped for the node's shutdown: what exited stays for the status to show, until a cancel.
    if (keepsStoppedContainers(ctx.termination)) return { next: 'Terminated' };
    // The status reads how the containers ended before they are gone (a removed pod's terminal status);
    // a stop that sets the pod's status (a preemption) says it even for a pod with nothing left to read.
    if ((rt?.containers ?? []).length > 0 || ctx.termination?.status) await ctx.recordFinalStatus();
    const failures: string[] = [];
    const attempt = async (what: string, op: () => Promise<void>): Promise<void> => {
      try {
        await op();
      } catch (err) {
        failures.push(`${what}: ${errorMessage(err)}`);
      }
    };
    for (const c of rt?.containers ?? [])
      await attempt(`removing container ${c.name} (${c.id})`, () =>
        ctx.teardown(() => ctx.runtime.removeContainer(c.id)),
      );
    // A sandbox goes only once its containers have; the pod's directories only once nothing of it runs.
    if (failures.length === 0)
      for (const s of rt?.sandboxes ?? [])
        await attempt(`removing sandbox ${s.id}`, () => ctx.teardown(() => ctx.runtime.removeSandbox(s.id)));
    if (failures.length === 0)
      await attempt('removing pod directories', () =>
        ctx.teardown(() => ctx.runtime.cleanupPod(ctx.uid, ctx.namespace, ctx.name)),
      );
    if (failures.length > 0) throw new Error(`cleaning up the pod: ${failures.join('; ')}`);
    ctx.backoff.forgetPod(ctx.uid);
    ctx.pullBackOff.forgetPod(ctx.uid);
    ctx.emit((o) => o.podRemoved?.(ctx.uid));
    (rt ? ctx.logger : ctx.logger.v(2)).info('Pod removed', { pod: ctx.key, podUID: ctx.uid });
    return { next: 'Done' };
  },
});
