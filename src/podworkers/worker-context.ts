// What every state of a pod worker can see and use.
import type { Logger } from '../log/logger.js';
import type { RuntimePod } from '../runtime/runtime-pods.js';
import type { CrashLoopBackOff } from './crashloop-backoff.js';
import type { ImagePullBackOff } from './image-pull-backoff.js';
import type { PodRuntime, DesiredPod } from './pod-runtime.js';
import type { WaitingReason } from './compute-actions.js';
import type { PodEvent, PodWorkerObserver } from './observer.js';

export type PodWorkerStateName = 'WaitingToStart' | 'Syncing' | 'Terminating' | 'Terminated' | 'Done';

/** What the last sync found, for status and `bootlet pods`. */
export interface SyncOutcome {
  readonly at: Date;
  readonly waiting: ReadonlyMap<string, WaitingReason>;
  readonly error?: string;
  readonly podFailed?: string;
}

/** The runtime state a sync read and left as it was (it took no action). */
export interface UntouchedRuntime {
  readonly pod: RuntimePod | undefined;
  /** When the read began. */
  readonly readAt: number;
}

export interface WorkerContext {
  readonly uid: string;
  /** `<namespace>/<name>`: at most one pod per key may run at a time. */
  readonly key: string;
  readonly name: string;
  readonly namespace: string;
  /** The pod as configured; undefined for an orphan found in the runtime with no manifest. */
  desired: DesiredPod | undefined;
  /** Set when the worker must stop the pod (manifest removed or replaced, orphan). */
  terminationRequested: boolean;
  /** Grace for killing containers of an orphan, read back from the runtime's annotations. */
  orphan?: RuntimePod;
  readonly runtime: PodRuntime;
  readonly backoff: CrashLoopBackOff;
  readonly pullBackOff: ImagePullBackOff;
  /** The probe that has failed for this container (liveness or startup at its threshold), if any. */
  failedProbe(containerName: string, containerId: string): 'liveness' | 'startup' | undefined;
  readonly logger: Logger;
  readonly syncFrequencyMs: number;
  /** True when no other pod with the same key is still running or terminating. */
  mayStart(): boolean;
  lastSync?: SyncOutcome;
  /**
   * Set by every wake from outside the worker (runtime event, manifest change, probe, another
   * pod stopping); cleared when a sync begins to read the runtime.
   */
  externallyWoken: boolean;
  /** What the last sync read, when it changed nothing; a resync may use it instead of reading again. */
  untouched?: UntouchedRuntime;
  /** True while the PLEG watches the runtime (its relists succeed), so a change would have woken the worker. */
  runtimeWatched(): boolean;
  /** Emits to the observers (prober, status); never throws. */
  emit(call: (o: PodWorkerObserver) => void): void;
  /** Records a pod event (Pulled, Created, Started, Killing, BackOff, ...). */
  event(type: PodEvent['type'], reason: string, message: string, container?: string): void;
  now(): number;
}

export interface Transition {
  readonly next: PodWorkerStateName;
  /** Run again after this delay unless woken earlier; undefined: only when woken. */
  readonly wakeAfterMs?: number;
}

export interface PodState {
  readonly name: PodWorkerStateName;
  run(ctx: WorkerContext): Promise<Transition>;
}

/** The kubelet's 10s error back-off, jittered to 10-15s so that failing pods do not march in step. */
export function errorRetryMs(): number {
  return 10_000 + Math.floor(Math.random() * 5_000);
}

/** A resync reads the runtime itself at least this often, even while the PLEG reports no change. */
export const MAX_UNTOUCHED_REUSE_MS = 5 * 60_000;

/**
 * The pod's runtime state for a sync: what the last sync read, if nothing can have changed since
 * (only the worker's own timer woke it, the PLEG is watching, and the read is recent), else a new
 * read. This is the kubelet's resync from its PLEG cache: an idle pod's periodic resync costs no
 * runtime call, and a change still wakes the worker through the PLEG and gets a fresh read.
 */
export async function runtimeForSync(ctx: WorkerContext): Promise<UntouchedRuntime> {
  const now = ctx.now();
  const last = ctx.untouched;
  const reusable = !ctx.externallyWoken && last !== undefined && now - last.readAt < MAX_UNTOUCHED_REUSE_MS && ctx.runtimeWatched();
  ctx.externallyWoken = false;
  ctx.untouched = undefined;
  if (reusable) return last;
  return { pod: await ctx.runtime.getPod(ctx.uid), readAt: now };
}

/** syncFrequency jittered up to +50%, as the kubelet does. */
export function resyncMs(ctx: WorkerContext): number {
  return ctx.syncFrequencyMs + Math.floor(Math.random() * ctx.syncFrequencyMs * 0.5);
}
