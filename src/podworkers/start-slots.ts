// When a pod may leave WaitingToStart. Two rules, the kubelet's first and bootlet's second:
// - same name: a pod waits until every other pod of its slot (k8s/pod-slot.ts) has stopped, so that an
//   edited manifest never has two versions running at once (same host ports, same data dir). Stopped,
//   not removed: a leftover the runtime will not remove (containerd keeps some after a cancelled start)
//   must not keep the new pod from running.
// - start slots: at most `max` pods are in their first sync (sandbox and containers being made) at
//   once; the others wait their turn in the order they asked, and one removed while it waits never starts.

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

/** What the slots need of a pod. */
export interface SlotMember {
  readonly uid: string;
  /** Its same-name slot (k8s/pod-slot.ts). */
  readonly slot: string;
  /** Nothing of it runs any more, or its worker has ended. */
  hasStopped(): boolean;
  /** Asks its worker for a step. */
  wake(): void;
}

export class StartSlots<M extends SlotMember> {
  /** Members by slot: the same-name checks run for every step of every waiting pod. */
  private readonly bySlot = new Map<string, Set<M>>();
  /** Holding a start slot: from leaving WaitingToStart to the end of the first sync step. */
  private readonly starting = new Set<M>();
  /** Waiting for a start slot, in the order they asked. */
  private readonly queue = new Set<M>();

  constructor(readonly max: number) {
    if (!(max >= 1)) throw new Error(`maxConcurrentStarts must be at least 1, not ${String(max)}`);
  }

  join(m: M): void {
    let same = this.bySlot.get(m.slot);
    if (!same) this.bySlot.set(m.slot, (same = new Set()));
    same.add(m);
  }

  /** The member is gone: its start slot (if any) goes to the next in line, its slot's others may start. */
  leave(m: M): void {
    this.queue.delete(m);
    this.startDone(m);
    const same = this.bySlot.get(m.slot);
    same?.delete(m);
    if (same?.size === 0) this.bySlot.delete(m.slot);
    this.wakeSameSlot(m);
  }

  /**
   * Whether `m` may start now; true hands it a start slot. `wanted` is asked after the same-name
   * rule: a pod no longer wanted takes no place in the queue.
   */
  take(m: M, wanted: () => boolean): boolean {
    if (this.starting.has(m)) return true;
    for (const other of this.bySlot.get(m.slot) ?? []) if (other !== m && !other.hasStopped()) return false;
    if (!wanted()) return false;
    if (this.starting.size >= this.max) {
      this.queue.add(m);
      return false;
    }
    this.queue.delete(m);
    this.starting.add(m);
    return true;
  }

  /** Gives up its place in the queue (removed while it waits: it never starts). */
  withdraw(m: M): void {
    this.queue.delete(m);
  }

  /** The member's first sync is over (or it stopped): its start slot goes to the next in line. */
  startDone(m: M): void {
    if (!this.starting.delete(m)) return;
    for (const next of this.queue) {
      if (this.starting.size >= this.max) return;
      this.queue.delete(next);
      next.wake();
    }
  }

  /** The member stopped: the others of its slot may start now. */
  wakeSameSlot(m: M): void {
    for (const other of this.bySlot.get(m.slot) ?? []) if (other !== m) other.wake();
  }
}
