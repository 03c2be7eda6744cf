// What the API server holds of the mirror pods bound to this node, as the node's one pods watch
// (node-pods.ts) tells it: every LIST replaces it (and is told to the resync listeners), every
// watch event of a mirror pod updates it, so a `kubectl delete pod <mirror>` is noticed in well
// under a second. Pods that are not mirrors are the API pod source's (src/config/api).
//
// What we wrote ourselves (a create, a status patch) is taken in at once (`observe`), and a late
// event never undoes a newer write (informer/resource-version.ts).
import type { Pod } from 'kubernetes-types/core/v1';
import { atLeastAsNew } from '../../informer/resource-version.js';
import type { Informer, ReflectorHandler } from '../../informer/store.js';
import { isMirrorPod } from '../../k8s/annotations.js';
import { podKey } from './mirror-pod.js';

const keyOf = (pod: Pod): string => podKey(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');

export class MirrorPodCache implements ReflectorHandler<Pod> {
  private readonly pods = new Map<string, Pod>();
  private readonly listeners: ((key: string) => void)[] = [];
  private readonly resyncListeners: (() => void)[] = [];
  private synced = false;

  /** Hears `pods` from now on (the node's pods watch; its owner starts and stops it). */
  constructor(
    pods: Informer<Pod>,
    private readonly nodeName: string,
  ) {
    pods.addHandler(this);
  }

  get(key: string): Pod | undefined {
    return this.pods.get(key);
  }
  keys(): string[] {
    return [...this.pods.keys()];
  }
  /** A list has completed since start: an absent key really means "no mirror pod". */
  get hasSynced(): boolean {
    return this.synced;
  }

  onChange(listener: (key: string) => void): void {
    this.listeners.push(listener);
  }

  /** Called after every full list (the first sync, and each relist after something was missed). */
  onResync(listener: () => void): void {
    this.resyncListeners.push(listener);
  }

  /** Takes in an object we just wrote (create, status patch), unless the cache already has something newer. */
  observe(pod: Pod): void {
    const key = keyOf(pod);
    if (!isMirrorPod(pod) || pod.spec?.nodeName !== this.nodeName) return;
    // Whether the same object or a recreated one under the name: only ever move forward.
    if (!atLeastAsNew(pod, this.pods.get(key))) return;
    this.pods.set(key, pod);
  }

  /** We deleted it (grace 0): forget it now rather than wait for the watch. */
  forget(key: string, uid: string | undefined): void {
    if (this.pods.get(key)?.metadata?.uid === uid) this.pods.delete(key);
  }

  replaced(items: readonly Pod[]): void {
    this.synced = true;
    const before = new Set(this.pods.keys());
    this.pods.clear();
    for (const pod of items) if (isMirrorPod(pod)) this.pods.set(keyOf(pod), pod);
    for (const k of new Set([...before, ...this.pods.keys()])) this.notify(k);
    for (const l of this.resyncListeners) l();
  }

  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Pod): void {
    if (!isMirrorPod(pod)) return;
    const key = keyOf(pod);
    if (type === 'DELETED') {
      if (this.pods.get(key)?.metadata?.uid !== pod.metadata?.uid) return;
      this.pods.delete(key);
    } else {
      const have = this.pods.get(key);
      if (have && have.metadata?.uid === pod.metadata?.uid && !atLeastAsNew(pod, have)) return;
      this.pods.set(key, pod);
    }
    this.notify(key);
  }

  private notify(key: string): void {
    for (const l of this.listeners) l(key);
  }
}
