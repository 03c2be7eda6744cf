// The one point where a new pod of the desired set, from any source, is admitted before a worker
// gets it (the kubelet's HandlePodAdditions). Admitted pods' changes pass through to the workers;
// a refused pod never reaches them and is reported Failed with the kubelet's reason (or, for an API
// pod that cannot run here at all, the refusal the source gave it: validation, a volume kind). Nothing is
// admitted before the runtime has been read back: a pod found there already runs and is admitted
// as it is, whatever it asks (a restart of the agent never kills a running pod), and the rest then
// follow in creation order, measured against it. A refused pod is not looked at again until its
// UID changes; a pod that leaves frees its share at once (the kubelet's pod manager drops it). An
// API pod the server already has Succeeded or Failed is never run again (the kubelet runs no
// terminal pod), even after a restart of the agent. A critical pod admitted by preemption counts
// at once in its victims' place, and reaches the workers once they have stopped; each victim is
// stopped through its worker with the preemption's termination request (Failed, reason Preempting).
import type { PodUpdate, StaticPod } from '../config/types.js';
import { PREEMPTED_CONDITION_MESSAGE, PREEMPTED_MESSAGE, PREEMPTING } from '../k8s/disruption.js';
import { isTerminalPhase } from '../k8s/pod-phase.js';
import { isStaticPod } from '../k8s/priority.js';
import type { Logger } from '../log/logger.js';
import type { TerminationRequest } from '../podworkers/termination-request.js';
import { byCreationTime } from './admission-order.js';
import { canAdmitPod } from './can-admit.js';
import type { NodeFacts } from './node-facts.js';
import { victimsStopped } from './victim-stops.js';
import { allocationOf, type PodAllocations } from './pod-allocations.js';
import { judgeResize } from './resize-admission.js';
import { stableJson } from '../util/stable-json.js';

export interface PodAdmissionDeps {
  /** The node as it is now (labels, allocatable, taints). */
  node(): NodeFacts;
  /** An admitted pod's change, for the pod workers. */
  apply(u: PodUpdate): void;
  /** Stops an admitted pod through its worker (a preemption's victim: the kubelet's killPodNow). */
  stop(pod: StaticPod, request: TerminationRequest): void;
  /** The pod's reported phase is Succeeded or Failed: it no longer counts against the node. */
  isTerminal(uid: string): boolean;
  /**
   * The pod is refused at admission (its status is Failed with this reason; the status message says
   * "Pod was rejected: " first), or preempted to admit a critical pod (its stop sets its status).
   */
  refused(pod: StaticPod, reason: string, message: string, how: 'rejected' | 'preempted'): void;
  /** An API pod the server has in a terminal phase: never started; its status is the server's. */
  terminal(pod: StaticPod): void;
  /** A refused pod left the desired set. */
  forgotten(uid: string): void;
  /** Resolves once nothing of the pod runs (its worker stopped it, or it has none); never rejects. */
  stopped(uid: string): Promise<void>;
  /** The resources allocated to resized pods (in-place resize); absent, a pod runs with its spec. */
  allocations?: PodAllocations;
  /** A pod's resize state changed (pending, allocated): its status is to be recomputed. */
  resizeChanged?(uid: string): void;
  logger: Logger;
}

/** A preemption's stop: Failed at once, whatever the victim's containers do, as the kubelet's status function sets it. */
const PREEMPTION: TerminationRequest = {
  reason: 'preempted',
  status: {
    reason: PREEMPTING,
    message: PREEMPTED_MESSAGE,
    conditionMessage: PREEMPTED_CONDITION_MESSAGE,
    alwaysFailed: true,
  },
};

/** What admission did with a pod: handed on now, admitted but held until its victims stop, refused. */
type Admitted = 'now' | 'held' | 'refused';

/** An API pod whose phase on the server is terminal. */
function isTerminalApiPod(sp: StaticPod): boolean {
  const phase = sp.pod.status?.phase;
  return !isStaticPod(sp.pod) && isTerminalPhase(phase);
}

export class PodAdmission {
  private readonly admitted = new Map<string, StaticPod>();
  private readonly refusedPods = new Map<string, StaticPod>();
  /** Pods that arrived before the runtime was read, by UID. */
  private pending: Map<string, StaticPod> | undefined = new Map();
  /** Whether the runtime held a UID when it was read back at start (the adoption policy's answer). */
  private foundAtStart: (uid: string) => boolean = () => false;
  /** Of those, the ones refused or gone since: not admitted as they run any more. */
  private readonly letGo = new Set<string>();
  /** Admitted pods waiting for their preemption's victims to stop, each with the token of its wait. */
  private readonly held = new Map<string, symbol>();

  constructor(private readonly deps: PodAdmissionDeps) {}

  /**
   * The runtime has been read: the pods that came so far are admitted, running ones first.
   * `foundAtStart` says whether the runtime held a UID then: such a pod runs already.
   */
  startAdmitting(foundAtStart: (uid: string) => boolean): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    this.foundAtStart = foundAtStart;
    const all = [...pending.values()];
    // A pod that cannot run here is refused even if it runs already: nothing in it may be used on
    // the node. A terminal one is not started either; the workers stop what runs of it.
    for (const sp of all.filter((p) => p.refusal !== undefined || isTerminalApiPod(p))) this.forgetFound(sp.uid);
    for (const sp of all.filter((p) => this.runsAlready(p.uid))) {
      this.admitted.set(sp.uid, sp);
      this.judgeResize(sp, undefined);
      // Re-identified under a kubelet's running pod while waiting: the workers hear it as that
      // change (the computed UID never had a worker), as they would have without admission.
      if (sp.computedUid !== undefined && sp.computedUid !== sp.uid)
        this.deps.apply({ op: 'UPDATE', pod: sp, previous: { ...sp, uid: sp.computedUid } });
      else this.deps.apply({ op: 'ADD', pod: sp });
    }
    for (const sp of byCreationTime(all.filter((p) => !this.runsAlready(p.uid)))) this.add(sp);
  }

  update(u: PodUpdate): void {
    if (this.pending) return this.updatePending(u);
    if (u.op === 'ADD') return this.add(u.pod);
    if (u.op === 'REMOVE') return this.remove(u.pod);
    if (u.previous.uid === u.pod.uid) {
      const before = this.admitted.get(u.pod.uid);
      if (before) {
        this.admitted.set(u.pod.uid, u.pod);
        this.judgeResize(u.pod, before);
        // A held pod reaches the workers as it is when its wait ends.
        if (!this.held.has(u.pod.uid)) this.deps.apply(u);
      } else if (this.refusedPods.has(u.pod.uid)) this.refusedPods.set(u.pod.uid, u.pod);
      else this.add(u.pod);
      return;
    }
    // A new UID under the key: the old pod leaves the node's count before the new one is admitted.
    const wasGiven = this.admitted.delete(u.previous.uid) && !this.held.delete(u.previous.uid);
    this.dropRefused(u.previous.uid);
    this.forgetFound(u.previous.uid);
    const now = this.admit(u.pod);
    if (now === 'now') this.deps.apply(wasGiven ? u : { op: 'ADD', pod: u.pod });
    else if (wasGiven) this.deps.apply({ op: 'REMOVE', pod: u.previous });
  }

  /** Found running at start, and neither refused nor gone since: admitted as it runs. */
  private runsAlready(uid: string): boolean {
    return this.foundAtStart(uid) && !this.letGo.has(uid);
  }

  private forgetFound(uid: string): void {
    if (this.foundAtStart(uid)) this.letGo.add(uid);
  }

  isAdmitted(uid: string): boolean {
    return this.admitted.has(uid);
  }

  private updatePending(u: PodUpdate): void {
    const pending = this.pending!;
    if (u.op === 'REMOVE') pending.delete(u.pod.uid);
    else {
      if (u.op === 'UPDATE') pending.delete(u.previous.uid);
      pending.set(u.pod.uid, u.pod);
    }
  }

  private add(sp: StaticPod): void {
    if (this.admitted.has(sp.uid) || this.refusedPods.has(sp.uid)) return;
    const now = this.admit(sp);
    if (now !== 'refused') this.judgeResize(sp, undefined);
    if (now === 'now') this.deps.apply({ op: 'ADD', pod: sp });
  }

  private remove(sp: StaticPod): void {
    this.forgetFound(sp.uid);
    const was = this.admitted.delete(sp.uid);
    if (was && !this.held.delete(sp.uid)) this.deps.apply({ op: 'REMOVE', pod: sp });
    this.dropRefused(sp.uid);
    this.deps.allocations?.remove(sp.uid);
    // Its share is free: a resize that waited for room may fit now.
    if (was) this.retryDeferred();
  }

  /** The admitted pods that count against the node, as they run (their allocations), but `uid`. */
  private othersThan(uid: string): StaticPod['pod'][] {
    const a = this.deps.allocations;
    return [...this.admitted.values()]
      .filter((p) => p.uid !== uid && !this.deps.isTerminal(p.uid))
      .map((p) => (a ? a.allocatedPod(p.pod) : p.pod));
  }

  /**
   * An admitted pod whose spec asks for other resources than it runs with (an in-place resize): the
   * resize is allocated if it fits, else it is pending (Deferred or Infeasible) and the pod runs on
   * with what it has. `before`: the pod as it was admitted until now (its allocation, the first time).
   */
  private judgeResize(sp: StaticPod, before: StaticPod | undefined): void {
    const a = this.deps.allocations;
    if (!a) return;
    if (!a.has(sp.uid)) {
      if (!before || stableJson(allocationOf(before.pod)) === stableJson(allocationOf(sp.pod))) return;
      void a.allocate(before.pod);
    }
    if (!a.differs(sp.pod)) {
      if (a.setPending(sp.uid, undefined)) this.deps.resizeChanged?.(sp.uid);
      return;
    }
    const pending = judgeResize(sp.pod, this.othersThan(sp.uid), this.deps.node().allocatable);
    if (pending) {
      if (a.setPending(sp.uid, pending)) {
        this.deps.logger.warn('Pod resize is pending', {
          pod: sp.key,
          podUID: sp.uid,
          reason: pending.reason,
          message: pending.message,
        });
        this.deps.resizeChanged?.(sp.uid);
      }
      return;
    }
    a.setPending(sp.uid, undefined);
    void a.allocate(sp.pod);
    this.deps.logger.info('Pod resize allocated', {
      pod: sp.key,
      podUID: sp.uid,
      generation: sp.pod.metadata.generation,
    });
    this.deps.resizeChanged?.(sp.uid);
    this.retryDeferred();
  }

  /** Resizes that waited for room, tried again (highest priority first), each handed to its worker when allocated. */
  private retryDeferred(): void {
    const a = this.deps.allocations;
    if (!a) return;
    const waiting = a
      .deferred()
      .map((uid) => this.admitted.get(uid))
      .filter((sp): sp is StaticPod => sp !== undefined)
      .sort((x, y) => (y.pod.spec?.priority ?? 0) - (x.pod.spec?.priority ?? 0));
    for (const sp of waiting) {
      if (a.pending(sp.uid)?.reason !== 'Deferred') continue;
      this.judgeResize(sp, undefined);
      if (a.pending(sp.uid) === undefined && !this.held.has(sp.uid))
        this.deps.apply({ op: 'UPDATE', pod: sp, previous: sp });
    }
  }

  private dropRefused(uid: string): void {
    if (this.refusedPods.delete(uid)) this.deps.forgotten(uid);
  }

  /** Decides for one pod; an admitted one is recorded (and its victims evicted), a refused one reported. */
  private admit(sp: StaticPod): Admitted {
    if (sp.refusal) {
      this.refusedPods.set(sp.uid, sp);
      this.deps.logger.warn('Pod refused: it cannot run on this node', {
        pod: sp.key,
        podUID: sp.uid,
        reason: sp.refusal.reason,
        message: sp.refusal.message,
      });
      this.deps.refused(sp, sp.refusal.reason, sp.refusal.message, 'rejected');
      return 'refused';
    }
    if (isTerminalApiPod(sp)) {
      this.refusedPods.set(sp.uid, sp);
      this.deps.logger
        .v(2)
        .info('Pod is terminal already, not starting it', { pod: sp.key, podUID: sp.uid, phase: sp.pod.status?.phase });
      this.deps.terminal(sp);
      return 'refused';
    }
    if (this.runsAlready(sp.uid)) {
      this.admitted.set(sp.uid, sp);
      return 'now';
    }
    const others: StaticPod[] = [...this.admitted.values()].filter((p) => !this.deps.isTerminal(p.uid));
    const allocated = this.deps.allocations;
    const d = canAdmitPod(
      sp.pod,
      others.map((p) => (allocated ? allocated.allocatedPod(p.pod) : p.pod)),
      this.deps.node(),
    );
    if (!d.admit) {
      this.refusedPods.set(sp.uid, sp);
      this.deps.logger.warn('Pod refused admission', {
        pod: sp.key,
        podUID: sp.uid,
        reason: d.reason,
        message: d.message,
      });
      this.deps.refused(sp, d.reason, d.message, 'rejected');
      return 'refused';
    }
    this.admitted.set(sp.uid, sp);
    if (d.preempt.length === 0) return 'now';
    const victims = d.preempt.map((v) => others.find((p) => p.uid === v.metadata?.uid)!);
    for (const victim of victims) this.preempt(victim, sp);
    this.holdUntilStopped(sp, victims);
    return 'held';
  }

  private preempt(victim: StaticPod, by: StaticPod): void {
    this.admitted.delete(victim.uid);
    this.refusedPods.set(victim.uid, victim);
    this.deps.logger.warn('Preempting pod to free up resources', {
      pod: victim.key,
      podUID: victim.uid,
      requestingPod: by.key,
    });
    this.deps.refused(victim, PREEMPTING, PREEMPTED_MESSAGE, 'preempted');
    this.deps.stop(victim, PREEMPTION);
  }

  /** The critical pod reaches the workers, as the set has it then, once its victims have stopped (unless it left meanwhile). */
  private holdUntilStopped(sp: StaticPod, victims: readonly StaticPod[]): void {
    const token = Symbol(sp.uid);
    this.held.set(sp.uid, token);
    void victimsStopped(victims, sp, { stopped: (uid) => this.deps.stopped(uid), logger: this.deps.logger }).then(
      () => {
        if (this.held.get(sp.uid) !== token) return;
        this.held.delete(sp.uid);
        const now = this.admitted.get(sp.uid);
        if (now) this.deps.apply({ op: 'ADD', pod: now });
      },
    );
  }
}
