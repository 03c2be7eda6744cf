import { deleteFromStore } from './deletion.js';
import { RESOURCES } from './resources.js';
import type { ObjectStore } from './store.js';
import { arr, meta, obj, str, type KObject } from './types.js';

/**
 * The part of kube-controller-manager's garbage collector bootlet relies on: once every owner of an
 * object is gone (e.g. the Node of a mirror pod), the object is deleted in the background, gracefully,
 * as a DELETE without options would. It acts only while `active()` (the API server is up).
 */
export class GarbageCollector {
  enabled = true;
  private scheduled = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: ObjectStore,
    private readonly active: () => boolean,
  ) {
    this.unsubscribe = store.subscribe((ev) => {
      if (ev.type === 'DELETED') this.schedule();
    });
  }

  schedule(): void {
    if (this.scheduled || !this.enabled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.enabled && this.active()) this.sweep();
    });
  }

  close(): void {
    this.unsubscribe();
  }

  private sweep(): void {
    const all: { storageKey: string; o: KObject }[] = [];
    for (const rt of RESOURCES)
      for (const o of this.store.list(rt.storageKey)) all.push({ storageKey: rt.storageKey, o });
    const live = new Set(all.map(({ o }) => meta(o).uid));
    for (const rt of RESOURCES) {
      for (const o of this.store.list(rt.storageKey)) {
        const owners = arr(o.metadata.ownerReferences).map((r) => str(obj(r).uid));
        if (owners.length === 0 || owners.some((uid) => live.has(uid))) continue;
        if (o.metadata.deletionTimestamp) continue;
        deleteFromStore(this.store, rt, o);
      }
    }
  }
}
