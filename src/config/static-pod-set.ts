// The desired static pods as a set that later parts can read and watch (the API side mirrors it),
// kept from the config source's updates.
import type { PodUpdate, StaticPod } from './types.js';

export class StaticPodSet {
  private readonly byKey = new Map<string, StaticPod>();
  private readonly listeners: (() => void)[] = [];
  private complete = false;

  apply(u: PodUpdate): void {
    if (u.op === 'REMOVE') this.byKey.delete(u.pod.key);
    else this.byKey.set(u.pod.key, u.pod);
    this.changed();
  }

  /** Every manifest has been read once (the kubelet's sourcesReady). */
  markReady(): void {
    if (this.complete) return;
    this.complete = true;
    this.changed();
  }

  ready(): boolean {
    return this.complete;
  }

  list(): readonly StaticPod[] {
    return [...this.byKey.values()];
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
