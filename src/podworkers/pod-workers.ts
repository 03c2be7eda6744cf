// Dispatches desired-state changes and runtime events to one PodWorker per pod UID, and keeps
// at most one pod per name running: a replacement waits until its predecessor has stopped. Stopped,
// not removed: as in the kubelet (a static pod's name is free once its old UID has terminated),
// a leftover the runtime will not remove (containerd keeps some after a cancelled start) must not
// keep the new pod from running.
// Of the pods found running with no manifest, it stops only those a static source (or bootlet)
// made, and keeps those a refused manifest may declare ("held") until that file is fixed or gone.
// At most maxConcurrentStarts pods are in their first sync (sandbox and containers being made) at
// once; the rest wait their turn in WaitingToStart, where a removal ends them before they start.
// At most maxConcurrentTeardowns pods' teardown calls run at once (teardown in worker-context.ts).
import { ConcurrencyLimit } from '../util/concurrency-limit.js';
import { errorMessage } from '../util/error-message.js';
import type { DesiredPodLookup, ManifestClaim, PodUpdate, StaticPod } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { RuntimePod } from '../kuberuntime/runtime-pods.js';
import { identityProblem } from '../kuberuntime/labels.js';
import { configSourceOf, isStaticRuntimePod } from '../kuberuntime/static-source.js';
import { CONFIG_SOURCE } from '../k8s/annotations.js';
import { CrashLoopBackOff } from './crashloop-backoff.js';
import { ImagePullBackOff } from './image-pull-backoff.js';
import type { PodRuntime } from '../kuberuntime/pod-runtime.js';
import { notify, type PodEvent, type PodWorkerObserver } from './observer.js';
import { PodWorker } from './pod-worker.js';
import type { PodCacheView, PodWorkerStateName, StopReason, SyncOutcome } from './worker-context.js';

/**
 * Pods in their first sync at once. The kubelet has no such limit; containerd on a 2-core node
 * given 2,000 RunPodSandbox at once was still making sandboxes after their manifests were gone.
 * Each start is a sandbox (a shim, runc, the pause process) and its containers, mostly CPU in
 * containerd and runc, but it also waits on them, so containerd wants more starts in flight than it
 * has cores. Measured on 2 cores (4 rounds each): 30 and 50 pods at once took 1.11/1.18x the bare
 * calls' time with 8, 1.11/1.07x with 16, 1.05/1.05x with 32; through a 2,000-manifest flood
 * /healthz p99 was 105-132 ms with 8, 140-182 with 16, 193-270 (slowest 0.6-1.3 s) with 32, as the
 * starts took the cores from the agent. 16 keeps the flood under issue 20's 200 ms; a kubeadm
 * control plane and its add-ons never wait on it.
 */
export const DEFAULT_MAX_CONCURRENT_STARTS = 16;

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
  /**
   * Records the status of a pod stopped for good while its stopped containers are still there to
   * read (the kubelet's pod worker sets it in the status manager at the end of syncTerminatingPod):
   * without it, the clean-up could remove them before the status saw how they ended.
   */
  finalStatus?: FinalStatusRecorder;
  /**
   * The sources this agent reads (`file`, `http`, `api`). A runtime pod one of them made that no
   * source gives (any more) is stopped; one from a source not read here (the API server's, on an
   * agent with no kubeconfig) is left to whoever reads it. Static sources only by default.
   */
  readSources?: ReadonlySet<string>;
}

export interface FinalStatusRecorder {
  record(uid: string): Promise<void>;
}

/** Longest the clean-up waits for the final status: a slow status must not keep a pod's remains forever. */
const FINAL_STATUS_WAIT_MS = 5_000;

export interface PodWorkerSnapshot {
  readonly uid: string;
  readonly key: string;
  readonly state: PodWorkerStateName;
  readonly pod?: StaticPod['pod'];
  readonly orphan: boolean;
  readonly lastSync?: SyncOutcome;
  /** Stopped for the node's shutdown (the status it reports then). */
  readonly stoppedFor?: StopReason;
  /** Being stopped for good: its manifest was removed or replaced (or it is an orphan). */
  readonly removing?: boolean;
}

/** A runtime pod with no accepted manifest, kept running because a refused file may declare it. */
interface HeldPod {
  readonly rt: RuntimePod;
  readonly key: string;
  /** The refusal it is held for, as last logged. */
  claim: ManifestClaim;
}

function snapshotOf(w: PodWorker, restarting: boolean): PodWorkerSnapshot {
  return {
    uid: w.ctx.uid,
    key: w.ctx.key,
    state: w.state,
    pod: w.ctx.desired,
    orphan: w.ctx.desired === undefined,
    lastSync: w.ctx.lastSync,
    stoppedFor: w.ctx.stoppedFor,
    removing: w.ctx.terminationRequested && !w.ctx.stoppedFor && !restarting,
  };
}

export class PodWorkers {
  private readonly workers = new Map<string, PodWorker>();
  private readonly held = new Map<string, HeldPod>();
  /** The refused manifest files and the pods they declare, from config. */
  private claims: readonly ManifestClaim[] = [];
  private readonly backoff = new CrashLoopBackOff();
  private readonly pullBackOff = new ImagePullBackOff();
  private readonly now: () => number;
  /** No pod starts before the runtime has been read back: a stale pod of the same name must be seen first. */
  private adopted = false;
  /** The UIDs the runtime held when it was read back at start: any other was made by this agent, in Syncing. */
  private readonly foundAtStart = new Set<string>();
  /** Pods added again (same UID) while their previous run was still stopping: started once it has. */
  private readonly restarts = new Map<string, StaticPod>();
  /** The last restart request per pod UID (restartContainers), until its worker is done. */
  private readonly restartRequests = new Map<string, string>();
  /**
   * The pod of each worker's last update: what a worker works with once its pod has left the
   * desired set (it is being stopped, as the kubelet's kill request carries the pod), or when
   * there is no set to read.
   */
  private readonly lastGiven = new Map<string, StaticPod['pod']>();
  /** The node is shutting down: nothing starts (the kubelet's shutdown admit handler refuses pods). */
  private nodeShuttingDown = false;
  /** Pods stopped for the node's shutdown, and who waits for each to have stopped. */
  private readonly shutdownStops = new Map<string, { sp: StaticPod; waiters: (() => void)[]; removed?: boolean }>();
  /**
   * Workers by pod key, static and API pods apart (sameNameSlot): the same-key checks run for every
   * step of every waiting pod.
   */
  private readonly byKey = new Map<string, Set<PodWorker>>();
  /** Each worker's entry in byKey, by UID. */
  private readonly slotOfUid = new Map<string, string>();
  /** Pods holding a start slot: from leaving WaitingToStart to the end of their first sync step. */
  private readonly starting = new Set<string>();
  /** Pods waiting for a start slot, in the order they asked. */
  private readonly startQueue = new Set<string>();
  private readonly maxStarts: number;
  private readonly teardowns: ConcurrencyLimit;
  /** Who waits for a pod to have stopped (whenStopped), by UID. */
  private readonly stopWaiters = new Map<string, (() => void)[]>();
  /** Frees a pod's start slot when its first sync step has finished. */
  private readonly slotObserver: PodWorkerObserver = { podWorkerStep: (uid) => this.startDone(uid) };

  constructor(private readonly opts: PodWorkersOptions) {
    this.now = opts.now ?? Date.now;
    this.maxStarts = opts.maxConcurrentStarts ?? DEFAULT_MAX_CONCURRENT_STARTS;
    if (!(this.maxStarts >= 1))
      throw new Error(`maxConcurrentStarts must be at least 1, not ${String(opts.maxConcurrentStarts)}`);
    this.teardowns = new ConcurrencyLimit(opts.maxConcurrentTeardowns ?? DEFAULT_MAX_CONCURRENT_TEARDOWNS);
  }

  apply(u: PodUpdate): void {
    if (u.op === 'ADD') return this.ensure(u.pod);
    if (u.op === 'REMOVE') return this.terminate(u.pod.uid);
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
      this.terminate(u.previous.uid);
      return this.ensure(u.pod);
    }
    const w = this.workers.get(u.pod.uid);
    if (w) this.updated(w, u.pod);
    else this.ensure(u.pod);
  }

  /**
   * Called once the desired set is complete (all manifests read). Pods that are wanted are adopted
   * by their workers, which find their sandbox and containers by UID and keep them. Of the others,
   * only those a static source made (or bootlet), or a source this agent reads (`readSources`: the
   * API server's, whose first LIST has been answered by then, hold-back.ts), are this agent's; a pod
   * from a source not read here, or one with no kubelet labels, is left alone. An agent's pod is
   * stopped and removed, unless a refused manifest may declare it (never an API pod): then it is
   * held, running, until that file is fixed or removed.
   */
  adoptRuntimePods(found: ReadonlyMap<string, RuntimePod>): void {
    for (const uid of found.keys()) this.foundAtStart.add(uid);
    for (const [uid, rt] of found) {
      if (this.workers.has(uid)) continue;
      const key = `${rt.namespace}/${rt.name}`;
      const problem = identityProblem({ podNamespace: rt.namespace, podName: rt.name, podUid: uid });
      if (problem !== undefined) {
        this.opts.logger.warn('Leaving runtime pod alone: its labels are not a valid pod identity', {
          podUID: uid,
          err: problem,
        });
        continue;
      }
      if (!isStaticRuntimePod(rt, this.opts.readSources)) {
        this.opts.logger.v(2).info('Leaving runtime pod alone: no static source made it', {
          pod: key,
          podUID: uid,
          source: configSourceOf(rt) ?? '',
        });
        continue;
      }
      // A refused manifest never declares an API pod: the server's list is the whole answer for it.
      if (configSourceOf(rt) === 'api') {
        this.stopOrphan(uid, rt, 'Found pod the API server no longer binds to this node, stopping it');
        continue;
      }
      const claim = this.claimFor(key);
      if (claim) this.hold(uid, rt, key, claim);
      else this.stopOrphan(uid, rt, 'Found pod with no manifest, stopping it');
    }
    this.adopted = true;
    this.wakeAll();
  }

  /**
   * The refused manifest files and the pods they declare changed: held pods whose file is gone
   * (or no longer declares them) are stopped; a held pod stays while anything may still claim it.
   */
  refusedClaims(claims: readonly ManifestClaim[]): void {
    this.claims = claims;
    for (const [uid, h] of [...this.held]) {
      const claim = this.claimFor(h.key);
      if (!claim) {
        this.held.delete(uid);
        this.stopOrphan(
          uid,
          h.rt,
          'The refused manifest that kept the pod running is gone or declares another pod, stopping it',
        );
      } else if (claim.file !== h.claim.file || claim.message !== h.claim.message) {
        h.claim = claim;
        this.logHeld(uid, h);
      }
    }
  }

  /** Runtime pods kept running while a refused manifest may declare them. */
  heldPods(): Array<{ uid: string; key: string; file: string; message: string }> {
    return [...this.held].map(([uid, h]) => ({ uid, key: h.key, file: h.claim.file, message: h.claim.message }));
  }

  /** Wakes the worker of one pod (a runtime event for it). */
  wake(uid: string): void {
    this.workers.get(uid)?.wake();
  }

  /**
   * A restart of the pod's running containers asked through the API (a mirror pod's
   * kubectl.kubernetes.io/restartedAt): the worker's next sync kills and starts again every running
   * container not already carrying `value`. The same value asked again is a no-op there.
   */
  restartContainers(uid: string, value: string): void {
    if (this.restartRequests.get(uid) === value) return;
    this.restartRequests.set(uid, value);
    this.workers.get(uid)?.wake();
  }

  wakeAll(): void {
    for (const w of this.workers.values()) w.wake();
  }

  snapshot(): PodWorkerSnapshot[] {
    return [...this.workers.values()].map((w) => snapshotOf(w, this.restarts.has(w.ctx.uid)));
  }

  /** One pod's worker as snapshot() has it. */
  snapshotOf(uid: string): PodWorkerSnapshot | undefined {
    const w = this.workers.get(uid);
    return w ? snapshotOf(w, this.restarts.has(uid)) : undefined;
  }

  /** Namespace and name of the pod with this UID, if a worker has it. */
  podRef(uid: string): { namespace: string; name: string } | undefined {
    const w = this.workers.get(uid);
    return w ? { namespace: w.ctx.namespace, name: w.ctx.name } : undefined;
  }

  has(uid: string): boolean {
    return this.workers.has(uid);
  }

  async idle(): Promise<void> {
    await Promise.all([...this.workers.values()].map((w) => w.idle()));
  }

  /**
   * Stops a pod for the node's shutdown through its worker's ordinary termination, with the
   * shutdown's grace; resolves once nothing of it runs. Its stopped containers are kept, and its
   * status says `reason`/`message`, until restoreAfterShutdown.
   */
  stopForNodeShutdown(sp: StaticPod, stop: StopReason): Promise<void> {
    this.nodeShuttingDown = true;
    const w = this.workers.get(sp.uid);
    if (!w || w.state === 'Terminated' || w.state === 'Done') return Promise.resolve();
    const entry = this.shutdownStops.get(sp.uid) ?? { sp, waiters: [] };
    this.shutdownStops.set(sp.uid, entry);
    w.ctx.stoppedFor = stop;
    const stopped = new Promise<void>((resolve) => entry.waiters.push(resolve));
    w.requestTermination();
    return stopped;
  }

  /**
   * Resolves once nothing of the pod runs: its worker has stopped it (Terminated, clean-up may
   * follow) or ended, or there is no worker. A preemption waits on it before the critical pod starts.
   */
  whenStopped(uid: string): Promise<void> {
    const w = this.workers.get(uid);
    if (!w || w.state === 'Terminated' || w.state === 'Done') return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiting = this.stopWaiters.get(uid);
      if (waiting) waiting.push(resolve);
      else this.stopWaiters.set(uid, [resolve]);
    });
  }

  /** The shutdown was cancelled: pods start again, each stopped one anew under its UID. */
  restoreAfterShutdown(): void {
    this.nodeShuttingDown = false;
    for (const [uid, { sp, waiters, removed }] of this.shutdownStops) {
      for (const resolve of waiters) resolve();
      const w = this.workers.get(uid);
      if (!w) continue;
      // Cleared: its Terminated step removes what is left, and onDone starts it again (unless its
      // manifest went meanwhile).
      w.ctx.stoppedFor = undefined;
      // Started as the set has it now (its content may have changed under the same UID meanwhile).
      if (!removed) this.restarts.set(uid, this.opts.desired?.podByUid(uid) ?? sp);
      w.wake();
    }
    this.shutdownStops.clear();
    this.wakeAll();
  }

  /** Never rejects and never waits long: a status that cannot be computed must not hold the clean-up. */
  private async recordFinalStatus(uid: string): Promise<void> {
    const recorder = this.opts.finalStatus;
    if (!recorder) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, FINAL_STATUS_WAIT_MS)));
    try {
      await Promise.race([
        recorder
          .record(uid)
          .catch((err: unknown) =>
            this.opts.logger.warn('Failed to record the final pod status', { podUID: uid, err: errorMessage(err) }),
          ),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops timers; leaves every pod running (stopping bootlet is not stopping the pods). */
  shutdown(): void {
    for (const w of this.workers.values()) w.stopTimers();
  }

  private ensure(sp: StaticPod): void {
    const existing = this.workers.get(sp.uid);
    if (existing?.ctx.terminationRequested) {
      this.restarts.set(sp.uid, sp);
      return;
    }
    if (existing) return this.updated(existing, sp);
    const w = this.create(sp.uid, sp.pod.metadata.namespace, sp.pod.metadata.name, sp.pod);
    this.releaseHeld(sp);
    w.wake();
  }

  /** The pod under the worker's UID changed (same UID, new content): it syncs to it. */
  private updated(w: PodWorker, sp: StaticPod): void {
    this.lastGiven.set(w.ctx.uid, sp.pod);
    w.wake();
  }

  /** The refused claim that keeps a pod of this key running, if no accepted manifest declares the key. */
  private claimFor(key: string): ManifestClaim | undefined {
    for (const w of this.byKey.get(key) ?? [])
      if (w.ctx.desired !== undefined && !w.ctx.terminationRequested) return undefined;
    // A file that could not be read far enough may declare any pod.
    return this.claims.find((c) => c.podKey === key) ?? this.claims.find((c) => c.podKey === undefined);
  }

  private hold(uid: string, rt: RuntimePod, key: string, claim: ManifestClaim): void {
    const h: HeldPod = { rt, key, claim };
    this.held.set(uid, h);
    this.logHeld(uid, h);
  }

  private logHeld(uid: string, h: HeldPod): void {
    this.opts.logger.warn('Keeping pod running: its manifest is refused', {
      pod: h.key,
      podUID: uid,
      file: h.claim.file,
      err: h.claim.message,
    });
  }

  /** An accepted manifest now declares the key of held pods: the same UID is adopted, any other replaced. */
  private releaseHeld(sp: StaticPod): void {
    for (const [uid, h] of [...this.held]) {
      if (h.key !== sp.key) continue;
      this.held.delete(uid);
      if (uid === sp.uid) continue; // its worker now exists and adopts it as it runs
      this.stopOrphan(uid, h.rt, 'Manifest accepted, replacing the pod kept running while it was refused');
    }
  }

  private stopOrphan(uid: string, rt: RuntimePod, message: string): void {
    this.opts.logger.info(message, { pod: `${rt.namespace}/${rt.name}`, podUID: uid });
    const w = this.create(uid, rt.namespace, rt.name, undefined, configSourceOf(rt));
    w.ctx.orphan = rt;
    w.requestTermination();
  }

  private terminate(uid: string): void {
    this.restarts.delete(uid);
    const stop = this.shutdownStops.get(uid);
    if (stop) stop.removed = true;
    // A pod waiting for its turn gives it up: it ends in WaitingToStart and never starts.
    this.startQueue.delete(uid);
    this.workers.get(uid)?.requestTermination();
  }

  private create(
    uid: string,
    namespace: string,
    name: string,
    given: StaticPod['pod'] | undefined,
    source = given?.metadata.annotations[CONFIG_SOURCE],
  ): PodWorker {
    const key = `${namespace}/${name}`;
    const slot = sameNameSlot(key, source);
    if (given) this.lastGiven.set(uid, given);
    else this.lastGiven.delete(uid);
    const lookup = this.opts.desired;
    const lastGiven = this.lastGiven;
    const w = new PodWorker(
      {
        uid,
        key,
        name,
        namespace,
        // Read from the set while the pod is wanted; once it is being stopped, the pod it was
        // stopped with (a same-UID pod added meanwhile is started anew after). An orphan has none.
        get desired() {
          const last = lastGiven.get(uid);
          if (!last || this.terminationRequested) return last;
          return lookup?.podByUid(uid)?.pod ?? last;
        },
        terminationRequested: false,
        cache: this.opts.cache,
        // A pod the cache knows nothing of was absent at its last full read and has not been made
        // since (only this worker makes it): its first sync needs no read. One it holds (a same-UID
        // pod added again, a pod found at start) is read first.
        lastStepAt: this.opts.cache.has(uid) ? this.opts.cache.tick() : 0,
        stepEffects: { kind: 'unrecorded' },
        emit: (call) => {
          call(this.slotObserver);
          this.tell(uid, call);
        },
        event: (type, reason, message, container) => {
          const initContainer =
            container !== undefined && (given?.spec?.initContainers ?? []).some((c) => c.name === container);
          const e: PodEvent = { uid, namespace, name, type, reason, message, container, initContainer };
          this.opts.logger.v(2).info('Event', { pod: key, podUID: uid, type, reason, message, container });
          this.tell(uid, (o) => o.podEvent?.(e));
        },
        runtime: this.opts.runtime,
        backoff: this.backoff,
        pullBackOff: this.pullBackOff,
        failedProbe: (name, id) => this.opts.probes?.failedProbe(uid, name, id),
        restartRequest: () => this.restartRequests.get(uid),
        recordFinalStatus: () => this.recordFinalStatus(uid),
        networkNotReady: () => this.opts.network?.networkNotReady(),
        logger: this.opts.logger,
        syncFrequencyMs: this.opts.syncFrequencyMs,
        mayStart: () => this.mayStart(uid, slot),
        teardown: (op) => this.teardowns.run(op),
        neverInRuntime: () => this.adopted && !this.foundAtStart.has(uid),
        now: this.now,
      },
      (done) => this.onDone(done),
      (stopped) => {
        this.releaseStopWaiters(stopped.ctx.uid);
        this.startDone(uid);
        this.wakeSameKey(stopped);
      },
    );
    this.workers.set(uid, w);
    this.slotOfUid.set(uid, slot);
    let same = this.byKey.get(slot);
    if (!same) this.byKey.set(slot, (same = new Set()));
    same.add(w);
    if (given) this.tell(uid, (o) => o.podAdded?.(uid));
    return w;
  }

  /** Tells every observer about one pod; one that throws is logged and does not stop the others. */
  private tell(uid: string, call: (o: PodWorkerObserver) => void): void {
    notify(this.opts.observers ?? [], call, (err) =>
      this.opts.logger.error('Pod worker observer failed', { podUID: uid, err: String(err) }),
    );
  }

  private releaseStopWaiters(uid: string): void {
    const waiting = this.stopWaiters.get(uid);
    this.stopWaiters.delete(uid);
    for (const resolve of waiting ?? []) resolve();
    const entry = this.shutdownStops.get(uid);
    if (!entry) return;
    for (const resolve of entry.waiters.splice(0)) resolve();
  }

  /**
   * Whether the pod may leave WaitingToStart now; true hands it a start slot. A pod gone from the
   * desired set (its file removed while it waited) never starts; its removal ends its worker.
   */
  private mayStart(uid: string, key: string): boolean {
    if (!this.adopted || this.nodeShuttingDown) return false;
    if (this.starting.has(uid)) return true;
    for (const w of this.byKey.get(key) ?? []) if (w.ctx.uid !== uid && w.state !== 'Terminated') return false;
    for (const [heldUid, h] of this.held) if (heldUid !== uid && h.key === key) return false;
    if (this.opts.desired && !this.opts.desired.podByUid(uid)) return false;
    if (this.starting.size >= this.maxStarts) {
      this.startQueue.add(uid);
      return false;
    }
    this.startQueue.delete(uid);
    this.starting.add(uid);
    return true;
  }

  /** The pod's first sync is over (or it stopped, or its worker ended): its slot goes to the next in line. */
  private startDone(uid: string): void {
    if (!this.starting.delete(uid)) return;
    for (const next of this.startQueue) {
      if (this.starting.size >= this.maxStarts) return;
      this.startQueue.delete(next);
      this.workers.get(next)?.wake();
    }
  }

  private onDone(w: PodWorker): void {
    this.workers.delete(w.ctx.uid);
    this.restartRequests.delete(w.ctx.uid);
    this.lastGiven.delete(w.ctx.uid);
    this.releaseStopWaiters(w.ctx.uid);
    this.startQueue.delete(w.ctx.uid);
    this.startDone(w.ctx.uid);
    const slot = this.slotOfUid.get(w.ctx.uid) ?? w.ctx.key;
    const same = this.byKey.get(slot);
    same?.delete(w);
    if (same?.size === 0) this.byKey.delete(slot);
    this.slotOfUid.delete(w.ctx.uid);
    const again = this.restarts.get(w.ctx.uid);
    if (again) {
      this.restarts.delete(w.ctx.uid);
      this.tell(again.uid, (o) => o.podRestarted?.(again.uid));
      this.opts.logger.info('Static pod added again with the same UID, starting it anew', {
        pod: again.key,
        podUID: again.uid,
      });
      this.create(again.uid, again.pod.metadata.namespace, again.pod.metadata.name, again.pod).wake();
    }
    this.wakeSameKey(w);
  }

  private wakeSameKey(w: PodWorker): void {
    for (const other of this.byKey.get(this.slotOfUid.get(w.ctx.uid) ?? w.ctx.key) ?? []) if (other !== w) other.wake();
  }
}

/**
 * The same-name rule (a pod waits to start until the pod it replaces under its name has stopped) is
 * the kubelet's for static pods, which replace each other under one name. An API pod is another pod
 * even under a static pod's name (the kubelet keys pods by UID): they live side by side.
 */
function sameNameSlot(key: string, source: string | undefined): string {
  return source === 'api' ? `api:${key}` : key;
}
