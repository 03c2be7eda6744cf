// Static pods whose manifest went: their mirror stays, with the last status computed for the pod (the
// status manager holds a pod's final status for it after the pod's worker ended), until that status
// is terminal and in the server (or the agent has nothing more to say of the pod);
// then the key is let go and the mirror reconciler deletes the mirror as an orphan. So `kubectl get
// pod` shows a removed control-plane pod Succeeded or Failed before it disappears, as with the kubelet,
// whose mirror goes once the pod's worker has finished terminating it.
import type { Pod } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../../config/types.js';
import { isTerminalPhase } from '../../k8s/pod-phase.js';
import type { Clock } from '../../util/clock.js';
import { isMirrorOf } from './mirror-pod.js';
import type { PodStatusSource, StaticPodSource } from '../pod-sources.js';

/** Longest a removed static pod's mirror waits for its terminal status: its grace and the stop, with room. */
export const LEAVING_MAX_MS = 5 * 60_000;

/** A static pod whose manifest went. */
interface LeavingPod {
  readonly sp: StaticPod;
  readonly since: number;
}

export class LeavingMirrors {
  private readonly leaving = new Map<string, LeavingPod>();

  constructor(
    private readonly desired: StaticPodSource,
    /** The status manager's statuses: it holds a leaving pod's final one until the key is let go. */
    private readonly current: PodStatusSource,
    /** The mirror pod under a key, as the server holds it. */
    private readonly mirror: (key: string) => Pod | undefined,
    private readonly clock: Clock,
  ) {
    // Before every manifest is read a missing pod is not a removed one.
    desired.onRemoved((sp) => {
      if (!(desired.ready?.() ?? true)) return;
      this.letGo(sp.key);
      this.leaving.set(sp.key, { sp, since: clock.now().getTime() });
      current.hold?.(sp.uid);
    });
  }

  keys(): IterableIterator<string> {
    return this.leaving.keys();
  }

  /** The leaving static pod under a key. */
  pod(key: string): StaticPod | undefined {
    return this.leaving.get(key)?.sp;
  }

  /** The leaving pod whose mirror the key still holds (its own, not being deleted): it keeps that mirror and never gets a new one. */
  mirrorOwner(key: string): StaticPod | undefined {
    const m = this.mirror(key);
    const l = this.leaving.get(key);
    return m && l && isMirrorOf(m, l.sp) && !m.metadata?.deletionTimestamp ? l.sp : undefined;
  }

  /** A key given again (a manifest back under the same name) is no longer leaving. */
  refresh(): void {
    for (const key of [...this.leaving.keys()]) if (this.desired.podByKey(key)) this.letGo(key);
  }

  /** A pod's status changed: the key to sync when it is a leaving one. */
  statusChanged(uid: string): string | undefined {
    return this.byUid(uid)?.[0];
  }

  /**
   * Lets the key go when its mirror may be deleted: the terminal status is in the server, or the agent
   * has nothing more to say of the pod, or the mirror is gone, or a pod that never stops (the runtime
   * refusing) has waited too long. Returns whether it let go.
   */
  release(key: string): boolean {
    const l = this.leaving.get(key);
    if (!l) return false;
    const theirs = this.mirror(key)?.status;
    const ours = this.current.get(l.sp.uid);
    const terminal = isTerminalPhase(ours?.phase);
    const posted = !ours || (theirs?.phase === ours.phase && theirs?.reason === ours.reason);
    const gone = ours === undefined;
    const overdue = this.clock.now().getTime() - l.since > LEAVING_MAX_MS;
    if (!((terminal && posted) || (gone && posted) || overdue || !this.mirror(key))) return false;
    this.letGo(key);
    return true;
  }

  /** Every key let go (the connection stops): the final statuses held for them are released. */
  clear(): void {
    for (const key of [...this.leaving.keys()]) this.letGo(key);
  }

  private letGo(key: string): void {
    const l = this.leaving.get(key);
    if (!l) return;
    this.leaving.delete(key);
    this.current.release?.(l.sp.uid);
  }

  private byUid(uid: string): [string, LeavingPod] | undefined {
    for (const entry of this.leaving) if (entry[1].sp.uid === uid) return entry;
    return undefined;
  }
}
