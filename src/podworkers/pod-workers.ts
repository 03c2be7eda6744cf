// Dispatches desired-state changes and runtime events to one PodWorker per pod UID, and keeps
// at most one pod per name running: a replacement waits until its predecessor has stopped. Stopped,
// not removed: as in the kubelet (a static pod's name is free once its old UID has terminated),
// a leftover the runtime will not remove (containerd keeps some after a cancelled start) must not
// keep the new pod from running.
import type { PodUpdate, StaticPod } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { RuntimePod } from '../runtime/runtime-pods.js';
import { CrashLoopBackOff } from './crashloop-backoff.js';
import type { PodRuntime } from './pod-runtime.js';
import { notify, type PodEvent, type PodWorkerObserver } from './observer.js';
import { PodWorker } from './pod-worker.js';
import type { PodWorkerStateName, SyncOutcome } from './worker-context.js';

export interface PodWorkersOptions {
  runtime: PodRuntime;
  logger: Logger;
  syncFrequencyMs: number;
  now?: () => number;
  observers?: PodWorkerObserver[];
  /**
   * True while a PLEG watches the runtime and would wake a worker on any change of its pod; then
   * a periodic resync may reuse what the last sync read. Without it every sync reads the runtime.
   */
  runtimeWatched?: () => boolean;
}

export interface PodWorkerSnapshot {
  readonly uid: string;
  readonly key: string;
  readonly state: PodWorkerStateName;
  readonly pod?: StaticPod['pod'];
  readonly orphan: boolean;
  readonly lastSync?: SyncOutcome;
}

export class PodWorkers {
  private readonly workers = new Map<string, PodWorker>();
  private readonly backoff = new CrashLoopBackOff();
  private readonly now: () => number;
  /** No pod starts before the runtime has been read back: a stale pod of the same name must be seen first. */
  private adopted = false;

  constructor(private readonly opts: PodWorkersOptions) {
    this.now = opts.now ?? Date.now;
  }

  apply(u: PodUpdate): void {
    if (u.op === 'ADD') return this.ensure(u.pod);
    if (u.op === 'REMOVE') return this.terminate(u.pod.uid);
    if (u.previous.uid !== u.pod.uid) {
      this.opts.logger.info('Static pod changed, replacing it', { pod: u.pod.key, oldUID: u.previous.uid, podUID: u.pod.uid });
      this.terminate(u.previous.uid);
      return this.ensure(u.pod);
    }
    const w = this.workers.get(u.pod.uid);
    if (w) {
      w.ctx.desired = u.pod.pod;
      w.wake();
    } else this.ensure(u.pod);
  }

  /**
   * Called once the desired set is complete (all manifests read): every runtime pod that no
   * manifest wants any more is stopped and removed. Pods that are wanted are adopted by their
   * workers, which find their sandbox and containers by UID and keep them.
   */
  adoptRuntimePods(found: ReadonlyMap<string, RuntimePod>): void {
    for (const [uid, rt] of found) {
      if (this.workers.has(uid)) continue;
      this.opts.logger.info('Found pod with no manifest, stopping it', { pod: `${rt.namespace}/${rt.name}`, podUID: uid });
      const w = this.create(uid, rt.namespace, rt.name, undefined);
      w.ctx.orphan = rt;
      w.requestTermination();
    }
    this.adopted = true;
    this.wakeAll();
  }

  /**
   * A liveness (or startup) probe failed: the container is killed at the pod's next step, with the
   * reason logged, and then restarted or not by the restart policy.
   */
  containerUnhealthy(uid: string, containerId: string, name: string, message: string, graceSeconds?: number): void {
    const w = this.workers.get(uid);
    if (!w || w.ctx.terminationRequested) return;
    w.ctx.pendingKills.set(containerId, { name, message, graceSeconds });
    w.wake();
  }

  /** Wakes the worker of one pod (a runtime event for it). */
  wake(uid: string): void {
    this.workers.get(uid)?.wake();
  }

  wakeAll(): void {
    for (const w of this.workers.values()) w.wake();
  }

  snapshot(): PodWorkerSnapshot[] {
    return [...this.workers.values()].map((w) => ({
      uid: w.ctx.uid,
      key: w.ctx.key,
      state: w.state,
      pod: w.ctx.desired,
      orphan: w.ctx.desired === undefined,
      lastSync: w.ctx.lastSync,
    }));
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

  /** Stops timers; leaves every pod running (stopping bootlet is not stopping the pods). */
  shutdown(): void {
    for (const w of this.workers.values()) w.stopTimers();
  }

  private ensure(sp: StaticPod): void {
    const existing = this.workers.get(sp.uid);
    if (existing) {
      existing.ctx.desired = sp.pod;
      existing.wake();
      return;
    }
    this.create(sp.uid, sp.pod.metadata.namespace, sp.pod.metadata.name, sp.pod).wake();
  }

  private terminate(uid: string): void {
    this.workers.get(uid)?.requestTermination();
  }

  private create(uid: string, namespace: string, name: string, desired: StaticPod['pod'] | undefined): PodWorker {
    const key = `${namespace}/${name}`;
    const w = new PodWorker(
      {
        uid,
        key,
        name,
        namespace,
        desired,
        terminationRequested: false,
        pendingKills: new Map(),
        externallyWoken: true,
        runtimeWatched: () => this.opts.runtimeWatched?.() ?? false,
        emit: (call) => notify(this.opts.observers ?? [], call, (err) => this.opts.logger.error('Pod worker observer failed', { podUID: uid, err: String(err) })),
        event: (type, reason, message, container) => {
          const initContainer = container !== undefined && (desired?.spec?.initContainers ?? []).some((c) => c.name === container);
          const e: PodEvent = { uid, namespace, name, type, reason, message, container, initContainer };
          this.opts.logger.v(2).info('Event', { pod: key, podUID: uid, type, reason, message, container });
          notify(this.opts.observers ?? [], (o) => o.podEvent?.(e), (err) => this.opts.logger.error('Pod worker observer failed', { podUID: uid, err: String(err) }));
        },
        runtime: this.opts.runtime,
        backoff: this.backoff,
        logger: this.opts.logger,
        syncFrequencyMs: this.opts.syncFrequencyMs,
        mayStart: () => this.mayStart(uid, key),
        now: this.now,
      },
      (done) => this.onDone(done),
      (stopped) => this.wakeSameKey(stopped),
    );
    this.workers.set(uid, w);
    return w;
  }

  private mayStart(uid: string, key: string): boolean {
    if (!this.adopted) return false;
    for (const w of this.workers.values()) if (w.ctx.uid !== uid && w.ctx.key === key && w.state !== 'Terminated') return false;
    return true;
  }

  private onDone(w: PodWorker): void {
    this.workers.delete(w.ctx.uid);
    this.wakeSameKey(w);
  }

  private wakeSameKey(w: PodWorker): void {
    for (const other of this.workers.values()) if (other !== w && other.ctx.key === w.ctx.key) other.wake();
  }
}
