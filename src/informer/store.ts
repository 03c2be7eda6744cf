// The collection a reflector keeps (client-go's informer store) and the handlers it tells: every
// handler hears every LIST (`replaced`) and every watch event, so one watch serves several
// consumers; `onChange` hears the keys that really changed (not a relist or a repeated event that
// changed nothing), never those of the first LIST.
import type { ApiObject, WatchEventType } from './list-watch.js';

/** A consumer of the collection. */
export interface ReflectorHandler<T> {
  /** A LIST is in: the whole collection as the server has it now; `first` for the first one this handler hears. */
  replaced(items: readonly T[], first: boolean): void;
  /** A watch event after it (never a BOOKMARK), as the server sent it. */
  event(type: Exclude<WatchEventType, 'BOOKMARK'>, obj: T): void;
}

/** What a consumer needs of a reflector: to be told. Returns the handler's removal. */
export interface Informer<T> {
  addHandler(handler: ReflectorHandler<T>): () => void;
}

export const objectKey = (namespace: string | undefined, name: string | undefined): string =>
  `${namespace ?? ''}/${name ?? ''}`;

const keyOf = (obj: ApiObject): string => objectKey(obj.metadata?.namespace, obj.metadata?.name);

export class ObjectStore<T extends ApiObject> implements Informer<T> {
  private readonly items = new Map<string, T>();
  private readonly handlers = new Set<ReflectorHandler<T>>();
  private listed = false;

  /** `onChange`: an item added, modified or deleted after the first LIST, by its `<namespace>/<name>`. */
  constructor(private readonly onChange?: (key: string) => void) {}

  /** The first LIST is in: an absent item really is absent. */
  get synced(): boolean {
    return this.listed;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  /** A handler added after the first LIST hears the collection at once, as its first. */
  addHandler(handler: ReflectorHandler<T>): () => void {
    this.handlers.add(handler);
    if (this.listed) handler.replaced(this.list(), true);
    return () => this.handlers.delete(handler);
  }

  /** A full LIST: what it lacks is gone. Returns whether it was the first. */
  replace(items: readonly T[]): boolean {
    const first = !this.listed;
    this.listed = true;
    const before = new Map(this.items);
    this.items.clear();
    for (const obj of items) this.items.set(keyOf(obj), obj);
    for (const h of [...this.handlers]) h.replaced(items, first);
    if (first || !this.onChange) return first;
    for (const key of new Set([...before.keys(), ...this.items.keys()])) {
      const was = before.get(key);
      const now = this.items.get(key);
      if (!was || !now || !sameVersion(was, now)) this.onChange(key);
    }
    return first;
  }

  /** A watch event other than a BOOKMARK. */
  apply(type: Exclude<WatchEventType, 'BOOKMARK'>, obj: T): void {
    const key = keyOf(obj);
    let changed = true;
    if (type === 'DELETED') changed = this.items.delete(key);
    else {
      const had = this.items.get(key);
      this.items.set(key, obj);
      changed = !had || !sameVersion(had, obj);
    }
    for (const h of [...this.handlers]) h.event(type, obj);
    if (changed) this.onChange?.(key);
  }
}

/** The same object at the same version: a relist or a repeated event that changed nothing. */
function sameVersion(a: ApiObject, b: ApiObject): boolean {
  return (
    a.metadata?.uid === b.metadata?.uid &&
    !!a.metadata?.resourceVersion &&
    a.metadata.resourceVersion === b.metadata?.resourceVersion
  );
}
