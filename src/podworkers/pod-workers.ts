// Dispatches desired-state changes, stops and runtime events to one PodWorker per pod UID, each with
// its pod's record (pod-record.ts). Nothing starts before the runtime has been read back and what it
// held has been decided on (config/pod-config/runtime-adoption.ts: the stops it asks come first); a
// pod then starts when start-slots.ts lets it. Every stop is one termination request
// (termination-request.ts): a pod that left the desired set, a runtime pod no source gives, a
// preemption's victim, the node's shutdown. At most maxConcurrentTeardowns pods' teardown calls run
// at once (teardown in worker-context.ts).
import { ConcurrencyLimit } from '../util/concurrency-limit.js';
import type { DesiredPodLookup, PodUpdate, StaticPod } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import { CONFIG_SOURCE } from '../k8s/annotations.js';
import type { DefaultedPod } from '../k8s/pod.js';
import { podSlot } from '../k8s/pod-slot.js';
import { CrashLoopBackOff } from './crashloop-backoff.js';
import { recordFinalStatus, type FinalStatusRecorder } from './final-status.js';
import { ImagePullBackOff } from './image-pull-backoff.js';
import type { PodRuntime } from '../kuberuntime/pod-runtime.js';
import { notify, type PodWorkerObserver } from './observer.js';
import { PodRecord } from './pod-record.js';
import { PodWorker } from './pod-worker.js';
import { workerContext, type SharedWorkerParts } from './pod-worker-context.js';
import { snapshotOf, type PodWorkerSnapshot } from './snapshot.js';
import { DEFAULT_MAX_CONCURRENT_STARTS, StartSlots } from './start-slots.js';
import type { TerminationRequest } from './termination-request.js';
import type { PodCacheView } from './worker-context.js';

/**
 * Pods' teardown calls (StopPodSandbox, RemoveContainer, RemovePodSandbox, the pod's directories) at
 * once. The kubelet has no such limit either. Each is a runc run, a shim's exit and unmounts, with
 * no grace period to wait out; a flood's removal made ~50 at once, and the node's every process
 * (the agent's /healthz too: p99 ~200 ms, 4 at a time ~90 ms) waited on the CPU they took. Stopping
 * containers is not limited: it waits out grace periods, which must all run at the same time.
 */
export const DEFAULT_MAX_CONCURRENT_TEARDOWNS = 4;

export interface PodWorkersOptions {
  runtime: PodRuntime;
  logger: Logger;
  syncFrequencyMs: number;
  now?: () => number;
  observers?: PodWorkerObserver[];
  /** The one cache of runtime state, where every step reads its pod. */
  cache: PodCacheView;
  /** Probe results, an input of every sync (a failed liveness probe plans a kill). */
  probes?: { failedProbe(uid: string, containerName: string, containerId: string): 'liveness' | 'startup' | undefined };
  /** The runtime's network state (kuberuntime/runtime-health.ts); without it the network counts as ready. */
  network?: { networkNotReady(): string | undefined };
  /**
   * The one desired pod set, where a worker reads its pod for as long as the set holds its UID.
   * Without it (a worker set tested alone) a worker has the pod of the last update it was given.
   */
  desired?: DesiredPodLookup;
  /** Pods in their first sync at once; DEFAULT_MAX_CONCURRENT_STARTS by default. */
  maxConcurrentStarts?: number;
  /** Teardown calls at once; DEFAULT_MAX_CONCURRENT_TEARDOWNS by default. */
  maxConcurrentTeardowns?: number;
  /** Where a worker pushes its pod's final status (final-status.ts). */
  finalStatus?: FinalStatusRecorder;
}

/** A runtime pod no source gives, as the adoption policy hands it over to be stopped. */
export interface RuntimePodRef {
  readonly namespace: string;
  readonly name: string;
  /** Its `kubernetes.io/config.source`, which decides its same-name slot. */
  readonly source: string | undefined;
}

export class PodWorkers {
  private readonly records = new Map<string, PodRecord>();
  private readonly slots: StartSlots<PodRecord>;
  private readonly parts: SharedWorkerParts;
  /**
   * Whether the runtime held a UID when it was read back at start; unset until then, and nothing
   * starts before (a stale pod of the same name must be seen first).
   */
  private foundAtStart: ((uid: string) => boolean) | undefined;
  /** The node is shutting down: nothing starts (the kubelet's shutdown admit handler refuses pods). */
  private nodeShuttingDown = false;
  /**
   * Restarts asked through the API for a pod that has no worker yet (an agent back up reads the
   * mirror before it has read the runtime back): its record takes the request when it is made.
   */
  private readonly earlyRestartRequests = new Map<string, string>();

  constructor(private readonly opts: PodWorkersOptions) {
    this.slots = new StartSlots(opts.maxConcurrentStarts ?? DEFAULT_MAX_CONCURRENT_STARTS);
    const teardowns = new ConcurrencyLimit(opts.maxConcurrentTeardowns ?? DEFAULT_MAX_CONCURRENT_TEARDOWNS);
    this.parts = {
      runtime: opts.runtime,
      cache: opts.cache,
      logger: opts.logger,
      syncFrequencyMs: opts.syncFrequencyMs,
      backoff: new CrashLoopBackOff(),
      pullBackOff: new ImagePullBackOff(),
      desired: opts.desired,
      probes: opts.probes,
      network: opts.network,
      now: opts.now ?? Date.now,
      tell: (uid, call) => this.tell(uid, call),
      teardown: (op) => teardowns.run(op),
    };
  }

  apply(u: PodUpdate): void {
    if (u.op === 'ADD') return this.ensure(u.pod);
    if (u.op === 'REMOVE') return void this.terminate(u.pod.uid, { reason: 'removed' });
    if (u.previous.uid !== u.pod.uid) {
      // Re-identified with a kubelet's running pod: the computed UID never ran, its worker ends at once.
      if (u.pod.computedUid === u.previous.uid)
        this.opts.logger.info('Adopting the running pod a kubelet started from the same manifest', {
          pod: u.pod.key,
          podUID: u.pod.uid,
          computedUID: u.previous.uid,
        });
      else
        this.opts.logger.info('Static pod changed, replacing it', {
          pod: u.pod.key,
          oldUID: u.previous.uid,
          podUID: u.pod.uid,
        });
      this.terminate(u.previous.uid, { reason: 'removed' });
      return this.ensure(u.pod);
    }
    const r = this.records.get(u.pod.uid);
    if (r) this.updated(r, u.pod);
    else this.ensure(u.pod);
  }

  /**
   * The runtime has been read back and what it held decided on (the adoption policy's stops are
   * asked): pods may start. `foundAtStart` says whether the runtime held a UID then; a pod it did
   * not hold that is removed before it starts ends with no runtime call.
   */
  start(foundAtStart: (uid: string) => boolean): void {
    this.foundAtStart = foundAtStart;
    this.wakeAll();
  }

  /** A runtime pod no source gives (the adoption policy's decision): stopped and removed through a worker of its own. */
  stopRuntimePod(uid: string, pod: RuntimePodRef, message: string): void {
    this.opts.logger.info(message, { pod: `${pod.namespace}/${pod.name}`, podUID: uid });
    if (this.records.has(uid)) return void this.terminate(uid, { reason: 'orphan' });
    const r = this.create(uid, pod.namespace, pod.name, undefined, pod.source);
    r.termination = { reason: 'orphan' };
    r.wake();
  }

  /**
   * Stops the pod (the kubelet's killPod): its worker stops it as the request says; resolves once
   * nothing of it runs (at once when it has no worker). A pod already being stopped keeps the first
   * request. A stop for the node's shutdown starts nothing new until restoreAfterShutdown.
   */
  stop(uid: string, request: TerminationRequest): Promise<void> {
    return this.terminate(uid, request)?.whenStopped() ?? Promise.resolve();
  }

  /** Wakes the worker of one pod (a runtime event for it). */
  wake(uid: string): void {
    this.records.get(uid)?.wake();
  }

  /**
   * A restart of the pod's running containers asked through the API (a mirror pod's
   * kubectl.kubernetes.io/restartedAt): the worker's next sync kills and starts again every running
   * container not already carrying `value`. The same value asked again is a no-op there.
   */
  restartContainers(uid: string, value: string): void {
    const r = this.records.get(uid);
    if (r?.restartRequest === value) return;
    this.opts.logger.v(2).info('Restart of the pod requested through the API', {
      ...(r ? { pod: `${r.namespace}/${r.name}` } : {}),
      podUID: uid,
      value,
    });
    if (!r) return void this.earlyRestartRequests.set(uid, value);
    r.restartRequest = value;
    r.wake();
  }

  wakeAll(): void {
    for (const r of this.records.values()) r.wake();
  }

  snapshot(): PodWorkerSnapshot[] {
    return [...this.records.values()].map(snapshotOf);
  }

  /** One pod's worker as snapshot() has it. */
  snapshotOf(uid: string): PodWorkerSnapshot | undefined {
    const r = this.records.get(uid);
    return r ? snapshotOf(r) : undefined;
  }

  /** Namespace and name of the pod with this UID, if a worker has it. */
  podRef(uid: string): { namespace: string; name: string } | undefined {
    const r = this.records.get(uid);
    return r ? { namespace: r.namespace, name: r.name } : undefined;
  }

  has(uid: string): boolean {
    return this.records.has(uid);
  }

  async idle(): Promise<void> {
    await Promise.all([...this.records.values()].map((r) => r.worker.idle()));
  }

  /** Resolves once nothing of the pod runs: its worker has stopped it or ended, or there is no worker. */
  whenStopped(uid: string): Promise<void> {
    return this.records.get(uid)?.whenStopped() ?? Promise.resolve();
  }

  /** The shutdown was cancelled: pods start again, each stopped one anew under its UID. */
  restoreAfterShutdown(): void {
    this.nodeShuttingDown = false;
    for (const r of this.records.values()) {
      if (r.termination?.reason !== 'node-shutdown') continue;
      r.releaseStopWaiters();
      // Started as the set has it now (its content may have changed under the same UID meanwhile),
      // unless it left the set meanwhile. Its Terminated step removes what is left first.
      if (!r.leftSet) r.restartAs = this.opts.desired?.podByUid(r.uid)?.pod ?? r.given;
      r.termination = { reason: r.restartAs ? 'restart' : 'removed' };
      r.wake();
    }
    this.wakeAll();
  }

  /** Stops timers; leaves every pod running (stopping bootlet is not stopping the pods). */
  shutdown(): void {
    for (const r of this.records.values()) r.worker.stopTimers();
  }

  private terminate(uid: string, request: TerminationRequest): PodRecord | undefined {
    if (request.reason === 'node-shutdown') this.nodeShuttingDown = true;
    const r = this.records.get(uid);
    if (!r) {
      this.earlyRestartRequests.delete(uid);
      return undefined;
    }
    if (request.reason === 'node-shutdown') {
      // Already stopped (its clean-up may run): nothing to stop, no status to change.
      if (r.hasStopped()) return undefined;
    } else {
      r.restartAs = undefined;
      r.leftSet = true;
      // A pod waiting for its turn gives it up: it ends in WaitingToStart and never starts.
      this.slots.withdraw(r);
    }
    r.termination ??= request;
    r.wake();
    return r;
  }

  private ensure(sp: StaticPod): void {
    const existing = this.records.get(sp.uid);
    if (existing?.termination) {
      existing.restartAs = sp.pod;
      return;
    }
    if (existing) return this.updated(existing, sp);
    this.create(sp.uid, sp.pod.metadata.namespace, sp.pod.metadata.name, sp.pod).wake();
  }

  /** The pod under the worker's UID changed (same UID, new content): it syncs to it. */
  private updated(r: PodRecord, sp: StaticPod): void {
    r.given = sp.pod;
    r.wake();
  }

  private create(
    uid: string,
    namespace: string,
    name: string,
    given: DefaultedPod | undefined,
    source = given?.metadata.annotations[CONFIG_SOURCE],
  ): PodRecord {
    const r = new PodRecord(uid, namespace, name, podSlot(`${namespace}/${name}`, source), given);
    const ctx = workerContext(r, this.parts, {
      mayStart: () => this.mayStart(r),
      neverInRuntime: () => this.foundAtStart !== undefined && !this.foundAtStart(uid),
      recordFinalStatus: () => recordFinalStatus(this.opts.finalStatus, snapshotOf(r), this.opts.logger),
      stepEnded: () => this.slots.startDone(r),
    });
    r.worker = new PodWorker(
      ctx,
      () => this.onDone(r),
      () => {
        r.releaseStopWaiters();
        this.slots.startDone(r);
        this.slots.wakeSameSlot(r);
      },
    );
    r.restartRequest = this.earlyRestartRequests.get(uid);
    this.earlyRestartRequests.delete(uid);
    this.records.set(uid, r);
    this.slots.join(r);
    if (given) this.tell(uid, (o) => o.podAdded?.(uid));
    return r;
  }

  /** Tells every observer about one pod; one that throws is logged and does not stop the others. */
  private tell(uid: string, call: (o: PodWorkerObserver) => void): void {
    notify(this.opts.observers ?? [], call, (err) =>
      this.opts.logger.error('Pod worker observer failed', { podUID: uid, err: String(err) }),
    );
  }

  /**
   * Whether the pod may leave WaitingToStart now; true hands it a start slot. A pod gone from the
   * desired set (its file removed while it waited) never starts; its removal ends its worker.
   */
  private mayStart(r: PodRecord): boolean {
    if (!this.foundAtStart || this.nodeShuttingDown) return false;
    return this.slots.take(r, () => !this.opts.desired || this.opts.desired.podByUid(r.uid) !== undefined);
  }

  /** The worker has ended: its record goes, and everything it held with it. */
  private onDone(r: PodRecord): void {
    this.records.delete(r.uid);
    r.releaseStopWaiters();
    this.slots.leave(r);
    const again = r.restartAs;
    if (!again) return;
    this.tell(r.uid, (o) => o.podRestarted?.(r.uid));
    this.opts.logger.info('Static pod added again with the same UID, starting it anew', {
      pod: r.key,
      podUID: r.uid,
    });
    this.create(r.uid, again.metadata.namespace, again.metadata.name, again).wake();
  }
}
