// SyncPod: look at what runs, decide, act, and come back on the next event, when a back-off
// expires, or after syncFrequency at the latest.
import { PodSandboxState } from '../../cri/cri-types.js';
import { RESTARTED_AT } from '../../k8s/annotations.js';
import { containerMatchesSpec } from '../../kuberuntime/container-hash.js';
import { imageVolumesOf } from '../../kuberuntime/image-volumes.js';
import { actionsOf, computePodActions, isEmpty } from '../compute-actions.js';
import { policyForPod } from '../crashloop-backoff.js';
import { executeActions } from '../execute-actions.js';
import { podState } from './pod-state.js';
import { errorRetryMs, podForStep, resyncMs, type WorkerContext } from '../worker-context.js';
import {
  NETWORK_NOT_READY_ERROR_MSG,
  NETWORK_NOT_READY_REASON,
  NETWORK_NOT_READY_RETRY_MS,
} from '../../k8s/pod-network.js';
import type { DesiredPod } from '../../kuberuntime/pod-runtime.js';
import type { RuntimePod } from '../../kuberuntime/runtime-pods.js';
import { jittered } from '../../util/backoff.js';
import { errorMessage } from '../../util/error-message.js';

/**
 * As the kubelet's SyncPod: while the runtime's network is not ready only host-network pods are
 * synced; any other waits (what runs of it is left alone) and is tried again after 1 s. The event
 * and the log line are written when the reason changes, not on every retry.
 */
function holdForNetwork(
  ctx: WorkerContext,
  pod: DesiredPod,
  runtime: RuntimePod | undefined,
): { next: 'Syncing'; wakeAfterMs: number } | undefined {
  if (pod.spec?.hostNetwork) return undefined;
  const why = ctx.networkNotReady();
  if (why === undefined) return undefined;
  const error = `${NETWORK_NOT_READY_ERROR_MSG}: ${why}`;
  if (ctx.lastSync?.error !== error) {
    ctx.logger.info('Pod waits for the runtime network', { pod: ctx.key, podUID: ctx.uid, err: error });
    ctx.event('Warning', NETWORK_NOT_READY_REASON, error);
  }
  ctx.lastSync = { at: new Date(ctx.now()), waiting: new Map(), error };
  ctx.emit((o) => o.podSynced?.(pod, runtime, false));
  return { next: 'Syncing', wakeAfterMs: jittered(NETWORK_NOT_READY_RETRY_MS, 0.5) };
}

export const syncing = podState({
  name: 'Syncing',
  next: ['Terminating'],
  async run(ctx) {
    const pod = ctx.desired;
    if (ctx.termination || !pod) return { next: 'Terminating' };
    const spec = pod.spec ?? { containers: [] };
    try {
      const { pod: runtime } = await podForStep(ctx);
      const held = holdForNetwork(ctx, pod, runtime);
      if (held) return held;
      const policy = policyForPod(pod.metadata.annotations);
      const specs = new Map([...(spec.initContainers ?? []), ...spec.containers].map((c) => [c.name, c]));
      const now = ctx.now();
      const actions = computePodActions({
        uid: ctx.uid,
        podDisplay: `${ctx.name}_${ctx.namespace}(${ctx.uid})`,
        restartPolicy: spec.restartPolicy,
        initContainers: spec.initContainers ?? [],
        containers: spec.containers,
        ephemeralContainers: spec.ephemeralContainers ?? [],
        failedProbe: (inst) => ctx.failedProbe(inst.name, inst.id),
        restartRequest: ctx.restartRequest(),
        // The images of the image volumes it mounts are pulled before its own, and hold it the same way.
        pullHold: (c) =>
          imageVolumesOf(pod, c).reduce<ReturnType<typeof ctx.pullBackOff.hold>>(
            (held, v) => held ?? ctx.pullBackOff.hold(ctx.uid, v.image?.reference ?? '', now),
            undefined,
          ) ?? ctx.pullBackOff.hold(ctx.uid, c.image ?? '', now),
        specMatches: (inst) => {
          const c = specs.get(inst.name);
          return c !== undefined && containerMatchesSpec(inst.meta, c);
        },
        runtime,
        nowMs: now,
        admitRestart: (key, startedAt, finishedAt) => ctx.backoff.admit(key, startedAt, finishedAt, now, policy),
      });
      for (const [name, w] of actions.waiting) {
        ctx.logger.v(1).info('Back-off restarting failed container', {
          pod: ctx.key,
          podUID: ctx.uid,
          container: name,
          message: w.message,
        });
        ctx.event(
          'Warning',
          'BackOff',
          `Back-off restarting failed container ${name} in pod ${ctx.name}_${ctx.namespace}(${ctx.uid})`,
          name,
        );
      }
      if (actions.restarting !== undefined) {
        // One Normal event per request acted on, naming the value; the kills log their own Killing events.
        ctx.logger.info('Restarting containers as requested through the API', {
          pod: ctx.key,
          podUID: ctx.uid,
          restartedAt: actions.restarting,
        });
        ctx.event(
          'Normal',
          'Restarting',
          `Restarting containers: ${RESTARTED_AT}=${actions.restarting} set on the mirror pod`,
        );
      }
      const newest = runtime?.sandboxes[0];
      const sandbox =
        newest && newest.state === PodSandboxState.SANDBOX_READY
          ? { id: newest.id, attempt: newest.attempt, ip: newest.ip, additionalIps: newest.additionalIps }
          : undefined;
      const acted = !isEmpty(actions);
      // A sync that acts on nothing changes nothing: the next step's read need not be newer than it.
      if (!acted) ctx.stepEffects = { kind: 'none' };
      const result = acted
        ? await executeActions(ctx, actions, sandbox)
        : { errors: [], waiting: new Map(actions.waiting) };
      ctx.lastSync = {
        at: new Date(now),
        waiting: result.waiting,
        error: result.errors[0],
        podFailed: actions.podFailed,
      };
      ctx.emit((o) => o.podSynced?.(pod, runtime, acted));
      ctx.logger.v(3).info('Pod synced', {
        pod: ctx.key,
        podUID: ctx.uid,
        started:
          actionsOf(actions, 'startContainer').length +
          actionsOf(actions, 'startCreatedContainer').length +
          actionsOf(actions, 'startEphemeralContainer').length,
        killed: actionsOf(actions, 'killContainer').length,
        sandboxCreated: actionsOf(actions, 'createSandbox').length > 0,
      });
      if (result.errors.length > 0) return { next: 'Syncing', wakeAfterMs: errorRetryMs() };
      const untilBackOff = actions.wakeAtMs !== undefined ? Math.max(0, actions.wakeAtMs - ctx.now()) : Infinity;
      return { next: 'Syncing', wakeAfterMs: Math.min(untilBackOff, resyncMs(ctx)) };
    } catch (err) {
      const message = errorMessage(err);
      // A pod refused for the same reason at every retry (a user namespace the runtime cannot give,
      // a RuntimeClass not there) is said once; the retries are counted at --v=2.
      const times = ctx.lastSync?.error === message ? (ctx.lastSync.times ?? 1) + 1 : 1;
      ctx.lastSync = { at: new Date(ctx.now()), waiting: new Map(), error: message, times };
      const fields = { pod: ctx.key, podUID: ctx.uid, err: message };
      if (times === 1) ctx.logger.error('Error syncing pod, will retry', fields);
      else ctx.logger.v(2).info('Error syncing pod again, will retry', { ...fields, times });
      return { next: 'Syncing', wakeAfterMs: errorRetryMs() };
    }
  },
});
