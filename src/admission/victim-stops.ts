// A critical pod admitted by preemption starts only once its victims have stopped, as the kubelet's
// handler kills each victim (a blocking killPodNow) before it admits. Here the victims stop side by
// side and nothing else waits: other pods are admitted meanwhile, the event loop turns. A victim
// that has not stopped within killPodNow's time (its grace and half again, at least 10 s) is logged
// and the critical pod starts anyway, as the kubelet's handler carries on after a failed kill.
import type { StaticPod } from '../config/types.js';
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from '../k8s/defaults.js';
import type { Logger } from '../log/logger.js';

export interface VictimStopsDeps {
  /** Resolves once nothing of the pod runs; never rejects. */
  stopped(uid: string): Promise<void>;
  logger: Logger;
}

/** killPodNow's wait for a pod given no grace override. */
export function killTimeoutMs(victim: StaticPod): number {
  const grace = victim.pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  return Math.max(10, grace + Math.floor(grace / 2)) * 1000;
}

function oneStopped(victim: StaticPod, by: StaticPod, deps: VictimStopsDeps): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), killTimeoutMs(victim));
    timer.unref();
  });
  const stopped = deps.stopped(victim.uid).then(
    () => false,
    () => false,
  );
  return Promise.race([stopped, timedOut]).then((late) => {
    clearTimeout(timer);
    const fields = { pod: victim.key, podUID: victim.uid, criticalPod: by.key };
    if (late) deps.logger.error('Failed to evict pod', { ...fields, err: 'timeout waiting to kill pod' });
    else deps.logger.info('Pod evicted successfully', fields);
  });
}

/** Resolves once every victim has stopped or its wait has run out; never rejects. */
export function victimsStopped(victims: readonly StaticPod[], by: StaticPod, deps: VictimStopsDeps): Promise<void> {
  return Promise.all(victims.map((v) => oneStopped(v, by, deps))).then(() => undefined);
}
