import { deepCopy, meta, type KObject } from './types.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  rv: number;
  type: EventType;
  storageKey: string;
  object: KObject;
  /** The object before this change, for watchers whose selector it left. */
  prev?: KObject;
}

type Listener = (ev: StoreEvent) => void;

const DEFAULT_HISTORY = 1000;

/** The fake etcd: objects by key, one global revision, a bounded window of change events. */
export class ObjectStore {
  private revision = 1;
  private readonly items = new Map<string, KObject>();
  private history: StoreEvent[] = [];
  /** Watches from a revision below this cannot be served any more. */
  private compacted = 1;
  private readonly listeners = new Set<Listener>();

  constructor(private readonly historyLimit = DEFAULT_HISTORY) {}

  get currentRv(): number {
    return this.revision;
  }

  get oldestServableRv(): number {
    return this.compacted;
  }

  wipe(): void {
    this.items.clear();
    this.history = [];
    // Revisions stay monotonic (clients hold old ones); everything before the wipe is expired (410).
    this.compacted = ++this.revision;
  }

  /** etcd's compaction: the objects stay, every revision up to now is history no watch can start from (410). */
  compact(): void {
    this.history = [];
    this.compacted = ++this.revision;
  }

  get(storageKey: string, namespace: string, name: string): KObject | undefined {
    const o = this.items.get(key(storageKey, namespace, name));
    return o && deepCopy(o);
  }

  list(storageKey: string, namespace?: string): KObject[] {
    const prefix = namespace ? `${storageKey}/${namespace}/` : `${storageKey}/`;
    const out: KObject[] = [];
    for (const [k, v] of this.items) if (k.startsWith(prefix)) out.push(deepCopy(v));
    return out.sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  /** Stores the object under a new revision and tells the watchers. */
  put(storageKey: string, object: KObject, type: 'ADDED' | 'MODIFIED'): KObject {
    const m = meta(object);
    const k = key(storageKey, m.namespace, m.name);
    const prev = this.items.get(k);
    const rv = ++this.revision;
    const stored = deepCopy(object);
    stored.metadata.resourceVersion = String(rv);
    this.items.set(k, stored);
    this.emit({ rv, type, storageKey, object: deepCopy(stored), prev: prev && deepCopy(prev) });
    return deepCopy(stored);
  }

  remove(storageKey: string, namespace: string, name: string): KObject | undefined {
    const k = key(storageKey, namespace, name);
    const prev = this.items.get(k);
    if (!prev) return undefined;
    this.items.delete(k);
    const rv = ++this.revision;
    const gone = deepCopy(prev);
    gone.metadata.resourceVersion = String(rv);
    this.emit({ rv, type: 'DELETED', storageKey, object: deepCopy(gone), prev: deepCopy(prev) });
    return gone;
  }

  /** Events with rv > from, or undefined when that part of history was already dropped. */
  eventsSince(from: number): StoreEvent[] | undefined {
    if (from < this.compacted) return undefined;
    return this.history.filter((e) => e.rv > from);
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private emit(ev: StoreEvent): void {
    this.history.push(ev);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compacted = dropped[dropped.length - 1].rv;
    }
    for (const l of [...this.listeners]) l(ev);
  }
}

function key(storageKey: string, namespace: string, name: string): string {
  return `${storageKey}/${namespace}/${name}`;
}

function sortKey(o: KObject): string {
  const m = meta(o);
  return `${m.namespace}/${m.name}`;
}
