// What every state of a pod worker can see and use.
import type { Logger } from '../log/logger.js';
import type { CacheTime, CachedPod } from '../pleg/pod-cache.js';
import type { CreationDone } from '../pleg/runtime-reader.js';
import type { TerminationRequest } from './termination-request.js';
import type { CrashLoopBackOff } from './crashloop-backoff.js';
import type { ImagePullBackOff } from './image-pull-backoff.js';
import type { PodRuntime, DesiredPod } from '../kuberuntime/pod-runtime.js';
import type { WaitingReason } from './compute-actions.js';
import type { PodEvent, PodWorkerObserver } from './observer.js';
import { jittered } from '../util/backoff.js';

/**
 * The workers' one port to runtime state (pleg/runtime-reader.ts implements it): their pod as read
 * after their last step, and the creations and stops they are about to make.
 */
export interface PodCacheView {
  getNewerThan(uid: string, t: CacheTime): Promise<CachedPod>;
  tick(): CacheTime;
  /** The worker is about to create objects of the pod; it says what it created (see RuntimeReader.creating). */
  creating(uid: string): CreationDone;
  /** Whether the cache holds anything of the pod. */
  has(uid: string): boolean;
  /** The worker is about to stop the object `id`; it calls what is returned once the runtime answered (see RuntimeReader.stopping). */
  stopping(id: string): () => void;
}

/**
 * What a step did to the runtime, for the time the next step's read must be newer than: nothing
 * (the next may sync from the cache as it is), only creations the cache was told of (a read newer
 * than `at` includes them: the cache's own read of them), or something else (a read started after
 * the step).
 */
export type StepEffects =
  { readonly kind: 'none' } | { readonly kind: 'recorded'; readonly at: CacheTime } | { readonly kind: 'unrecorded' };

/** The pod's runtime state for a step: read after the previous step ended. */
export async function podForStep(ctx: WorkerContext): Promise<CachedPod> {
  return ctx.cache.getNewerThan(ctx.uid, ctx.lastStepAt);
}

export type PodWorkerStateName = 'WaitingToStart' | 'Syncing' | 'Terminating' | 'Terminated' | 'Done';

/** What the last sync found, for status and `bootlet pods`. */
export interface SyncOutcome {
  readonly at: Date;
  readonly waiting: ReadonlyMap<string, WaitingReason>;
  readonly error?: string;
  /** How many syncs in a row ended with this same error. */
  readonly times?: number;
  readonly podFailed?: string;
}

export interface WorkerContext {
  readonly uid: string;
  /** `<namespace>/<name>`: at most one pod per key may run at a time. */
  readonly key: string;
  readonly name: string;
  readonly namespace: string;
  /**
   * The pod as configured, read from the one desired set (the pod it was last given once it has
   * left the set); undefined for an orphan found in the runtime with no manifest.
   */
  readonly desired: DesiredPod | undefined;
  /** Set once the worker must stop the pod: why, with what grace, and the status it reports (the pod's record has it). */
  readonly termination: TerminationRequest | undefined;
  readonly runtime: PodRuntime;
  readonly backoff: CrashLoopBackOff;
  readonly pullBackOff: ImagePullBackOff;
  /** The probe that has failed for this container (liveness or startup at its threshold), if any. */
  failedProbe(containerName: string, containerId: string): 'liveness' | 'startup' | undefined;
  /** Pushes the pod's final status forward (final-status.ts), before its stopped containers are removed; never rejects. */
  recordFinalStatus(): Promise<void>;
  /** The last restart asked through the API (the mirror's restartedAt) for this pod, if any. */
  restartRequest(): string | undefined;
  /** Why pods on the pod network may not start now (the runtime's NetworkReady); undefined when they may. */
  networkNotReady(): string | undefined;
  readonly logger: Logger;
  readonly syncFrequencyMs: number;
  /** True when the pod may start now: no other pod of its name still runs, and a start slot is free (start-slots.ts). */
  mayStart(): boolean;
  /** Runs one teardown call (no grace period to wait out) in its turn: a few pods' at once, for the whole node. */
  teardown<T>(op: () => Promise<T>): Promise<T>;
  /**
   * True when nothing of the pod can be in the runtime: the runtime was read back at start without
   * it, and a worker still waiting to start has made nothing. Its removal then needs no runtime call.
   */
  neverInRuntime?(): boolean;
  lastSync?: SyncOutcome;
  /** The one cache of runtime state: a step reads its pod there, newer than the last step. */
  readonly cache: PodCacheView;
  /** When the last step's effects were known (cache time): the next one needs a read that started after it. */
  lastStepAt: CacheTime;
  /** What the step in progress did to the runtime; reset to 'unrecorded' before each step. */
  stepEffects: StepEffects;
  /** Emits to the observers (prober, status); never throws. */
  emit(call: (o: PodWorkerObserver) => void): void;
  /** Records a pod event (Pulled, Created, Started, Killing, BackOff, ...). */
  event(type: PodEvent['type'], reason: string, message: string, container?: string): void;
  now(): number;
}

/** The kubelet's 10s error back-off, jittered to 10-15s so that failing pods do not march in step. */
export function errorRetryMs(): number {
  return jittered(10_000, 0.5);
}

/** syncFrequency jittered up to +50%, as the kubelet does. */
export function resyncMs(ctx: WorkerContext): number {
  return jittered(ctx.syncFrequencyMs, 0.5);
}
