// A worker's context, made from its pod's record: the record holds the facts (the pod given, the
// termination request, the last restart request), the context only reads them, and the worker's own
// working state (its last sync, its last step's time) lives in the context beside them.
import type { DefaultedPod } from '../k8s/pod.js';
import type { Logger } from '../log/logger.js';
import type { PodRuntime } from '../kuberuntime/pod-runtime.js';
import type { CrashLoopBackOff } from './crashloop-backoff.js';
import type { ImagePullBackOff } from './image-pull-backoff.js';
import type { PodEvent, PodWorkerObserver } from './observer.js';
import type { PodRecord } from './pod-record.js';
import type { PodCacheView, WorkerContext } from './worker-context.js';

/** What every worker's context shares: the node's parts and the workers' own services. */
export interface SharedWorkerParts {
  readonly runtime: PodRuntime;
  readonly cache: PodCacheView;
  readonly logger: Logger;
  readonly syncFrequencyMs: number;
  readonly backoff: CrashLoopBackOff;
  readonly pullBackOff: ImagePullBackOff;
  /** The one desired pod set, by UID. */
  readonly desired?: { podByUid(uid: string): { readonly pod: DefaultedPod } | undefined };
  readonly probes?: {
    failedProbe(uid: string, containerName: string, containerId: string): 'liveness' | 'startup' | undefined;
  };
  readonly network?: { networkNotReady(): string | undefined };
  readonly now: () => number;
  /** Tells every observer about one pod; never throws. */
  tell(uid: string, call: (o: PodWorkerObserver) => void): void;
  /** Runs one teardown call in its turn. */
  teardown<T>(op: () => Promise<T>): Promise<T>;
}

/** What the workers decide for one pod, outside its record. */
export interface PodWorkerHooks {
  mayStart(): boolean;
  neverInRuntime(): boolean;
  recordFinalStatus(): Promise<void>;
  /** A step has ended, before the observers hear of it (a start slot is freed at the end of a pod's first sync). */
  stepEnded(): void;
}

export function workerContext(r: PodRecord, parts: SharedWorkerParts, hooks: PodWorkerHooks): WorkerContext {
  const { uid, key, name, namespace } = r;
  const lookup = parts.desired;
  const stepObserver: PodWorkerObserver = { podWorkerStep: () => hooks.stepEnded() };
  return {
    uid,
    key,
    name,
    namespace,
    // Read from the set while the pod is wanted; once it is being stopped, the pod it was stopped
    // with (a same-UID pod added meanwhile is started anew after). An orphan has none.
    get desired() {
      const last = r.given;
      if (!last || r.termination) return last;
      return lookup?.podByUid(uid)?.pod ?? last;
    },
    get termination() {
      return r.termination;
    },
    cache: parts.cache,
    // A pod the cache knows nothing of was absent at its last full read and has not been made
    // since (only this worker makes it): its first sync needs no read. One it holds (a same-UID
    // pod added again, a pod found at start) is read first.
    lastStepAt: parts.cache.has(uid) ? parts.cache.tick() : 0,
    stepEffects: { kind: 'unrecorded' },
    emit: (call) => {
      call(stepObserver);
      parts.tell(uid, call);
    },
    event: (type, reason, message, container) => {
      const initContainer =
        container !== undefined && (r.given?.spec?.initContainers ?? []).some((c) => c.name === container);
      const e: PodEvent = { uid, namespace, name, type, reason, message, container, initContainer };
      parts.logger.v(2).info('Event', { pod: key, podUID: uid, type, reason, message, container });
      parts.tell(uid, (o) => o.podEvent?.(e));
    },
    runtime: parts.runtime,
    backoff: parts.backoff,
    pullBackOff: parts.pullBackOff,
    failedProbe: (containerName, id) => parts.probes?.failedProbe(uid, containerName, id),
    restartRequest: () => r.restartRequest,
    recordFinalStatus: () => hooks.recordFinalStatus(),
    networkNotReady: () => parts.network?.networkNotReady(),
    logger: parts.logger,
    syncFrequencyMs: parts.syncFrequencyMs,
    mayStart: () => hooks.mayStart(),
    teardown: (op) => parts.teardown(op),
    neverInRuntime: () => hooks.neverInRuntime(),
    now: parts.now,
  };
}
