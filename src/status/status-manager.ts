// Keeps the latest PodStatus of every static pod, recomputed in the background whenever
// something may have changed it (a PLEG event, a probe result, a finished sync). It only reads:
// the sync loop never waits for it, and a failing runtime call leaves the last status in place.
import type { PodStatus } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { RuntimeContainer, RuntimePod } from '../kuberuntime/runtime-pods.js';
import { readTerminationMessage } from '../kuberuntime/termination-message.js';
import { ContainerState } from '../cri/cri-types.js';
import { KeyedSerialRunner } from '../util/serial-runner.js';
import { isTerminalPhase } from '../k8s/pod-phase.js';
import { isStaticPod } from '../k8s/priority.js';
import { withReportedTransitionTimes } from './conditions.js';
import { ReportedStatuses } from './reported-statuses.js';
import { generatePodStatus } from './generate-pod-status.js';
import type { ResizeState } from './resize-status.js';
import { removedStatus, stoppedStatus } from './stopped-status.js';
import { couldHaveRunningContainers, isDone, isTerminating } from '../podworkers/pod-states.js';
import type { PodWorkerStateName } from '../podworkers/worker-context.js';
import type { TerminationRequest } from '../podworkers/termination-request.js';
import type { ProbeState, WaitingReason } from './types.js';
import { errorMessage } from '../util/error-message.js';

/** What the status needs to know of one pod worker (PodWorkers.snapshot() entries satisfy it). */
export interface PodWorkerView {
  readonly uid: string;
  readonly key: string;
  readonly state: PodWorkerStateName;
  readonly pod?: StaticPod['pod'];
  readonly lastSync?: {
    readonly at: Date;
    readonly waiting: ReadonlyMap<string, WaitingReason>;
    readonly podFailed?: string;
  };
  /** Why and how it is being stopped: a status override (the node's shutdown, a preemption) is laid over its status. */
  readonly termination?: Pick<TerminationRequest, 'status'>;
  /** Being stopped for good (its manifest went, an orphan, a preemption): terminal once nothing of it runs. */
  readonly removing?: boolean;
}

export interface StatusManagerOptions {
  /** The pod's runtime state as the pod cache has it (the one cache; status never reads the runtime). */
  runtimePod(uid: string): RuntimePod | undefined;
  /** The pod workers as they are now. */
  pods(): readonly PodWorkerView[];
  /**
   * One pod's worker as it is now. Without it, pods() is searched: a copy of every worker for each
   * recomputation, which with 2,000 pods starting made the status the agent's busiest part.
   */
  pod?(uid: string): PodWorkerView | undefined;
  probes: ProbeState;
  nodeIP: string;
  runtimeName: string;
  logger: Logger;
  now?: () => Date;
  /** Reads an exited container's termination message (default: its mounted file or log tail). */
  readTerminationMessage?: (c: RuntimeContainer) => Promise<string>;
  /** Delay before recomputing, so the events of one change (a pod starting) make one recomputation. */
  settleMs?: number;
  /** Why a pod's resize waits (PodResizePending), from its allocation; absent, no resize is pending. */
  pendingResize?(uid: string): ResizeState['pending'];
  /** What the API server held for each pod before this agent started; the prober reads it too. */
  reported?: ReportedStatuses;
}

export interface PodStatusEntry {
  readonly uid: string;
  /** `<namespace>/<name>` */
  readonly key: string;
  readonly pod: StaticPod['pod'];
  readonly status: PodStatus;
  /** When the agent began stopping the pod (manifest removed or replaced). */
  readonly terminatingSince?: Date;
  /** The runtime state the status was computed from (for metrics). */
  readonly runtime?: RuntimePod;
  /** The status has the stop's override laid over it (the node's shutdown, a preemption). */
  readonly stopped?: boolean;
  /** The terminal status of a pod stopped for good, read while its stopped containers were there: kept as it is. */
  readonly final?: boolean;
}

/**
 * Recomputations run at most this many at a time, each after a turn of the event loop: 2,000 pods
 * removed at once asked for 2,000 recomputations whose settle timers all fired in one timer phase,
 * and ran back to back without the event loop answering anything (/healthz waited 6.7 s).
 */
const RECOMPUTES_AT_ONCE = 4;

export type StatusListener = (uid: string, entry: PodStatusEntry | undefined) => void;

export class StatusManager {
  private readonly entries = new Map<string, PodStatusEntry>();
  /** Pods refused at admission: their Failed status is set, never computed. */
  private readonly refused = new Map<string, PodStatusEntry>();
  /**
   * Who needs a pod's final status after its worker ended, by UID: admission while a preempted pod
   * stays refused, the API side while a removed static pod's mirror waits for it.
   */
  private readonly holds = new Map<string, Set<string>>();
  /** By pod UID, then container id: an exited container's message never changes, so it is read once. */
  private readonly terminationMessages = new Map<string, Map<string, string>>();
  private readonly listeners = new Set<StatusListener>();
  /** The last failed attempt to apply a pod's resize, by UID, until one succeeds. */
  private readonly resizeErrors = new Map<string, string>();
  /** One recomputation per pod at a time; a request during one makes one more after it. */
  private readonly recomputes: KeyedSerialRunner<string>;
  /**
   * Pods with a recomputation requested that has not begun reading yet, and whether it waits
   * settleMs first: further requests fold into it, since it will see their change anyway.
   */
  private readonly pending = new Map<string, boolean>();
  private readonly now: () => Date;
  private timer: NodeJS.Timeout | undefined;
  private recomputing = 0;
  private readonly waitingTurn: (() => void)[] = [];
  private readonly reportedStatuses: ReportedStatuses;
  /** Pods whose conditions have taken the reported transition times: once, at the first recompute that knows them. */
  private readonly reportedTimesTaken = new Set<string>();
  /** Pods whose next recomputation is their final one, with their worker as it handed it (recordFinal). */
  private readonly finalViews = new Map<string, PodWorkerView>();

  constructor(private readonly opts: StatusManagerOptions) {
    this.now = opts.now ?? (() => new Date());
    this.reportedStatuses = opts.reported ?? new ReportedStatuses();
    this.recomputes = new KeyedSerialRunner((uid) => this.settleAndRecompute(uid));
  }

  /** Recomputes one pod's status soon, from the pod cache; returns at once. */
  update(uid: string): void {
    if (this.pending.has(uid)) return;
    // A burst's first request waits for the rest of it; one made during a recomputation is
    // answered right after it, as the burst has had its pause.
    this.pending.set(uid, !this.recomputes.busy(uid));
    void this.recomputes.run(uid);
  }

  /** Recomputes every known pod, and forgets pods that have no worker any more. */
  updateAll(): void {
    const live = new Set<string>();
    for (const p of this.opts.pods()) {
      live.add(p.uid);
      this.update(p.uid);
    }
    for (const uid of this.entries.keys()) if (!live.has(uid)) this.update(uid);
  }

  /**
   * A full pass every `periodMs` as a safety net for a missed nudge (the kubelet's status
   * manager does the same every 10s).
   */
  start(periodMs = 10_000): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.updateAll(), periodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  get(uid: string): PodStatusEntry | undefined {
    return this.refused.get(uid) ?? this.entries.get(uid);
  }

  /** The pod was refused at admission: its status is this one until it leaves the desired set. */
  setRefused(pod: StaticPod, status: PodStatus): void {
    const entry: PodStatusEntry = { uid: pod.uid, key: pod.key, pod: pod.pod, status };
    this.refused.set(pod.uid, entry);
    this.emit(pod.uid, entry);
  }

  forgetRefused(uid: string): void {
    if (this.refused.delete(uid)) this.emit(uid, this.entries.get(uid));
  }

  /** `holder` needs the pod's final status after its worker ended, until it releases it. */
  hold(uid: string, holder: string): void {
    let holders = this.holds.get(uid);
    if (!holders) this.holds.set(uid, (holders = new Set()));
    holders.add(holder);
  }

  release(uid: string, holder: string): void {
    const holders = this.holds.get(uid);
    if (!holders?.delete(holder) || holders.size > 0) return;
    this.holds.delete(uid);
    const worker = this.workerOf(uid);
    if (!worker || isDone(worker)) this.forget(uid);
  }

  /** Every pod's latest status, sorted by key. */
  all(): PodStatusEntry[] {
    const byUid = new Map(this.entries);
    for (const [uid, e] of this.refused) byUid.set(uid, e);
    return [...byUid.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Called after a pod's status changed, or with undefined when the pod is gone. Returns an unsubscribe. */
  onChange(listener: StatusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The statuses as the API side reads them: the v1 PodStatus by UID, and which UID changed. */
  podStatuses(): {
    get(uid: string): PodStatus | undefined;
    onChange(listener: (uid: string) => void): void;
    hold(uid: string): void;
    release(uid: string): void;
    reported(uid: string, status: PodStatus | undefined): Promise<void>;
  } {
    return {
      get: (uid) => this.get(uid)?.status,
      onChange: (l) => void this.onChange((uid) => l(uid)),
      hold: (uid) => this.hold(uid, 'apiserver'),
      release: (uid) => this.release(uid, 'apiserver'),
      reported: (uid, status) => this.reported(uid, status),
    };
  }

  /**
   * What the API server holds for a pod, told the first time it is seen (a static pod's mirror; an
   * API pod's listed status is its own). Only the first is kept: it is what was reported before
   * this agent started. Resolves once the pod's status has been recomputed with it, so that what
   * is sent next never flips a container found running back to not ready.
   */
  async reported(uid: string, status: PodStatus | undefined): Promise<void> {
    if (this.reportedStatuses.has(uid)) return;
    const worker = this.workerOf(uid);
    if (!worker || isDone(worker)) return;
    this.reportedStatuses.keep(uid, status ?? {});
    if (!(status?.containerStatuses?.length || status?.conditions?.length) || !this.entries.has(uid)) return;
    this.pending.set(uid, false);
    await this.recomputes.run(uid);
  }

  idle(): Promise<void> {
    return this.recomputes.idle();
  }

  /**
   * The pod's worker stopped it for good and is about to remove its containers (or it never ran):
   * its status is computed now, with no settle, from the stopped containers and the worker as it
   * hands itself over, and a terminal one is kept from then on (the removal must not turn Succeeded
   * into Failed for want of a container to read), after the worker too while someone holds it.
   */
  async recordFinal(worker: PodWorkerView): Promise<void> {
    const uid = worker.uid;
    this.pending.set(uid, false);
    this.finalViews.set(uid, worker);
    try {
      await this.recomputes.run(uid);
    } finally {
      this.finalViews.delete(uid);
    }
  }

  /** Never rejects: a failure keeps the last status. */
  private async settleAndRecompute(uid: string): Promise<void> {
    if (this.pending.get(uid)) {
      const settleMs = this.opts.settleMs ?? 0;
      await (settleMs > 0 ? new Promise((r) => setTimeout(r, settleMs)) : Promise.resolve());
    }
    await this.takeTurn();
    this.pending.delete(uid);
    try {
      await this.recompute(uid);
    } catch (err) {
      this.opts.logger.warn('Failed to compute pod status, keeping the last one', {
        podUID: uid,
        err: errorMessage(err),
      });
    } finally {
      // The turn passes straight to the next in line, so no newcomer slips in between.
      const next = this.waitingTurn.shift();
      if (next) next();
      else this.recomputing--;
    }
  }

  /** Resolves when this recomputation may run: one of RECOMPUTES_AT_ONCE, after the event loop has had a turn. */
  private async takeTurn(): Promise<void> {
    if (this.recomputing >= RECOMPUTES_AT_ONCE) await new Promise<void>((resolve) => this.waitingTurn.push(resolve));
    else this.recomputing++;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private async recompute(uid: string): Promise<void> {
    const worker = this.workerOf(uid);
    if (!worker?.pod || isDone(worker)) {
      // Gone, or an orphan with no manifest: nothing to report for it (a final status someone holds stays).
      if (!(this.holds.has(uid) && this.entries.get(uid)?.final)) this.forget(uid);
      return;
    }
    const kept = this.entries.get(uid);
    if (kept?.final && worker.removing) return;
    // An API pod's object as first seen is what the API server showed before this start (a static
    // pod's is its mirror's, told by the API side through reported()).
    if (!isStaticPod(worker.pod) && worker.pod.status) this.reportedStatuses.keep(uid, worker.pod.status);
    const runtime = this.opts.runtimePod(uid);
    const override = worker.termination?.status;
    // A pod started again after a cancelled shutdown leaves its terminal status behind.
    const previous = kept?.stopped && !override ? undefined : kept;
    const terminating = isTerminating(worker);
    const waiting = worker.lastSync?.waiting ?? new Map<string, WaitingReason>();
    const computed = generatePodStatus({
      pod: worker.pod,
      runtime,
      probes: this.opts.probes,
      waiting,
      podFailed: worker.lastSync?.podFailed,
      nodeIP: this.opts.nodeIP,
      runtimeName: this.opts.runtimeName,
      reported: this.reportedStatuses.get(uid) ?? worker.pod.status,
      previous: previous?.status,
      now: this.now(),
      terminating,
      terminationMessages: await this.terminationMessagesOf(uid, runtime),
      resize: { pending: this.opts.pendingResize?.(uid), error: this.resizeErrors.get(uid) },
    });
    // The stop's status from the moment it is asked when it is Failed whatever happens (a preemption,
    // as the kubelet sets it before the kill); otherwise once nothing of it runs, so that the last
    // status posted is the true end (the node's shutdown).
    const stopped = override !== undefined && (override.alwaysFailed === true || !couldHaveRunningContainers(worker));
    const status = this.withReportedTimes(
      uid,
      stopped
        ? stoppedStatus(computed, override, previous?.status, this.now())
        : worker.removing
          ? removedStatus(computed, runtime)
          : computed,
    );
    // The worker may have finished while the runtime was read.
    const now = this.workerOf(uid);
    if (!now || isDone(now)) {
      this.forget(uid);
      return;
    }
    // An unchanged status keeps its object: readers (the API side's status syncs, every 10 s for
    // every pod) tell "nothing new" by identity instead of comparing it field by field again.
    const same = previous !== undefined && JSON.stringify(previous.status) === JSON.stringify(status);
    const entry: PodStatusEntry = {
      uid,
      key: worker.key,
      pod: worker.pod,
      status: same ? previous.status : status,
      terminatingSince: terminating ? (previous?.terminatingSince ?? this.now()) : undefined,
      runtime,
      ...(stopped ? { stopped } : {}),
      ...(worker.removing && this.finalViews.has(uid) && isTerminalPhase(status.phase) ? { final: true } : {}),
    };
    const changed = !same || !!previous.terminatingSince !== !!entry.terminatingSince;
    this.entries.set(uid, entry);
    if (changed) this.emit(uid, entry);
  }

  /** The worker applied a pod's resize (`error` undefined) or failed to; the status follows. */
  resizeApplied(uid: string, error?: string): void {
    if (error === undefined) this.resizeErrors.delete(uid);
    else this.resizeErrors.set(uid, error);
    this.update(uid);
  }

  /** Once per pod, the first status that knows what the API server held takes its transition times. */
  private withReportedTimes(uid: string, status: PodStatus): PodStatus {
    if (this.reportedTimesTaken.has(uid)) return status;
    const reported = this.reportedStatuses.get(uid);
    if (!reported?.conditions?.length) return status;
    this.reportedTimesTaken.add(uid);
    if (!status.conditions) return status;
    return { ...status, conditions: withReportedTransitionTimes(status.conditions, reported.conditions) };
  }

  private workerOf(uid: string): PodWorkerView | undefined {
    const handed = this.finalViews.get(uid);
    if (handed) return handed;
    return this.opts.pod ? this.opts.pod(uid) : this.opts.pods().find((p) => p.uid === uid);
  }

  private async terminationMessagesOf(
    uid: string,
    runtime: RuntimePod | undefined,
  ): Promise<ReadonlyMap<string, string>> {
    const known = this.terminationMessages.get(uid) ?? new Map<string, string>();
    const next = new Map<string, string>();
    const read = this.opts.readTerminationMessage ?? readTerminationMessage;
    for (const c of runtime?.containers ?? []) {
      if (c.state !== ContainerState.CONTAINER_EXITED) continue;
      // A file that cannot be read is as good as empty: the status must not fail for it.
      next.set(c.id, known.get(c.id) ?? (await read(c).catch(() => '')));
    }
    this.terminationMessages.set(uid, next);
    return next;
  }

  private forget(uid: string): void {
    this.terminationMessages.delete(uid);
    this.resizeErrors.delete(uid);
    this.reportedStatuses.forget(uid);
    this.reportedTimesTaken.delete(uid);
    if (this.entries.delete(uid)) this.emit(uid, undefined);
  }

  private emit(uid: string, entry: PodStatusEntry | undefined): void {
    for (const l of this.listeners) {
      try {
        l(uid, entry);
      } catch (err) {
        this.opts.logger.error('Pod status listener failed', { podUID: uid, err: errorMessage(err) });
      }
    }
  }
}
