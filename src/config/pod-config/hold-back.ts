// Runtime pods of a source that has not answered yet: they keep running, untouched, until it has.
// A pod the source then gives again is its worker's to adopt; one it does not give (or gives under
// a new UID) is released to be stopped, before anything of the same name may start.
import type { SourceName } from './sources';

/** What the hold-back needs to know of a runtime pod. */
export interface HeldPodRef {
  /** The pod's slot in the desired set (k8s/pod-slot.ts): its key, apart for API pods. */
  readonly slot: string;
  readonly source: SourceName;
}

interface HeldGroup {
  readonly pods: Map<string, HeldPodRef>;
  /** Hands these UIDs back to be stopped. */
  readonly release: (uids: readonly string[]) => void;
}

export class HoldBack {
  private readonly groups: HeldGroup[] = [];

  hold(pods: Map<string, HeldPodRef>, release: (uids: readonly string[]) => void): void {
    if (pods.size > 0) this.groups.push({ pods, release });
  }

  size(source?: SourceName): number {
    let n = 0;
    for (const g of this.groups) for (const p of g.pods.values()) if (source === undefined || p.source === source) n++;
    return n;
  }

  /** A pod of `slot` with `uid` is desired now: a held pod of that UID is adopted, any other of that slot released. */
  desired(slot: string, uid: string): void {
    this.settle((held, heldUid) => {
      if (heldUid === uid) return 'adopt';
      return held.slot === slot ? 'release' : 'keep';
    });
  }

  /** The source has answered in full: its held pods that are not desired (`isDesired`) are released. */
  answered(source: SourceName, isDesired: (uid: string) => boolean): void {
    this.settle((held, uid) => {
      if (held.source !== source) return 'keep';
      return isDesired(uid) ? 'adopt' : 'release';
    });
  }

  private settle(decide: (held: HeldPodRef, uid: string) => 'keep' | 'adopt' | 'release'): void {
    for (const g of [...this.groups]) {
      const released: string[] = [];
      for (const [uid, held] of [...g.pods]) {
        const d = decide(held, uid);
        if (d === 'keep') continue;
        g.pods.delete(uid);
        if (d === 'release') released.push(uid);
      }
      if (g.pods.size === 0) this.groups.splice(this.groups.indexOf(g), 1);
      if (released.length > 0) g.release(released);
    }
  }
}
