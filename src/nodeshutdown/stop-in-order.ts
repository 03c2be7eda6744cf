// Stops the node's pods for a shutdown, group after group (lowest priority first), each group in
// its control-plane waves: a wave is asked to stop once the previous one has exited (or used up its
// budget), so controller-manager and scheduler are gone before the API server is stopped, and the
// API server before etcd, which gets whatever time of the group remains.
import type { Pod } from 'kubernetes-types/core/v1';
import type { Logger } from '../log/logger.js';
import { groupByPriority, podGraceSeconds, waveBudgetMs, type ShutdownPriorityPeriod } from './shutdown-groups.js';
import { errorMessage } from '../util/error-message.js';

export interface ShutdownTarget {
  readonly uid: string;
  readonly key: string;
  readonly pod: Pod;
}

export interface StopInOrderDeps {
  /** Stops the pod with this grace (seconds); resolves once everything of it has stopped. */
  stopPod(target: ShutdownTarget, graceSeconds: number): Promise<void>;
  logger: Logger;
  now?: () => number;
  /** Waits this long; cancel() ends the wait early (tests give a fake clock's). */
  sleep?: (ms: number) => { done: Promise<void>; cancel: () => void };
}

/** One pod's stop, for the log and the measurement. */
export interface StoppedPod {
  readonly key: string;
  readonly priority: number;
  readonly graceSeconds: number;
  readonly startedMs: number;
  readonly stoppedMs?: number;
}

function sleep(ms: number): { done: Promise<void>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, ms))));
  return { done, cancel: () => clearTimeout(timer) };
}

export async function stopInOrder(
  periods: readonly ShutdownPriorityPeriod[],
  targets: readonly ShutdownTarget[],
  deps: StopInOrderDeps,
): Promise<StoppedPod[]> {
  const now = deps.now ?? Date.now;
  const wait = deps.sleep ?? sleep;
  const stopped: StoppedPod[] = [];
  for (const group of groupByPriority(periods, targets, (t) => t.pod)) {
    const groupStart = now();
    const groupEnd = groupStart + group.shutdownGracePeriodSeconds * 1000;
    const waits: Promise<void>[] = [];
    for (const [i, wave] of group.waves.entries()) {
      const waveStart = now();
      const budgetMs = waveBudgetMs(group, i, groupEnd - waveStart, (t) => t.pod);
      const stops = wave.map((t) => {
        // The pod's own grace when it is shorter than the wave's budget, as the kubelet does.
        const grace = Math.min(podGraceSeconds(t.pod), Math.floor(budgetMs / 1000));
        const entry: { -readonly [K in keyof StoppedPod]: StoppedPod[K] } = {
          key: t.key,
          priority: group.priority,
          graceSeconds: grace,
          startedMs: now(),
        };
        stopped.push(entry);
        deps.logger.info('Shutdown manager killing pod with gracePeriod', {
          pod: t.key,
          gracePeriod: grace,
          priority: group.priority,
        });
        return deps.stopPod(t, grace).then(
          () => {
            entry.stoppedMs = now();
            deps.logger.info('Shutdown manager finished killing pod', { pod: t.key });
          },
          (err: unknown) =>
            deps.logger.warn('Shutdown manager failed killing pod', { pod: t.key, err: errorMessage(err) }),
        );
      });
      const all = Promise.all(stops).then(() => undefined);
      waits.push(all);
      // The next wave goes when this one has exited, or at the latest when its budget is spent.
      const timer = wait(waveStart + budgetMs - now());
      await Promise.race([all, timer.done]);
      timer.cancel();
    }
    // The group's time covers its last wave; a pod still stopping then goes on past it, as in the kubelet.
    const timer = wait(groupEnd - now());
    const finished = await Promise.race([Promise.all(waits).then(() => true), timer.done.then(() => false)]);
    timer.cancel();
    if (!finished)
      deps.logger.info('Shutdown manager pod killing time out', {
        gracePeriod: group.shutdownGracePeriodSeconds,
        priority: group.priority,
      });
  }
  return stopped;
}
