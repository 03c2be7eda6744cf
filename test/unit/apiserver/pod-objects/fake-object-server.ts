// A fake of the API client's list/watch/post as the pod objects use them: objects by collection
// path, resourceVersions, field selectors by name, open watches the test can see, end or expire,
// and TokenRequests answered by a function the test sets.
import type { TokenRequest } from 'kubernetes-types/authentication/v1';
import { ApiError } from '../../../../src/apiserver/client/api-error.js';
import type { Query, WatchEvent, WatchHandle } from '../../../../src/apiserver/client/client.js';
import type { PodObjectsClient } from '../../../../src/apiserver/pod-objects/client.js';

interface Obj {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
}

interface OpenWatch {
  readonly path: string;
  readonly name: string | undefined;
  readonly onEvent: (e: WatchEvent<Obj>) => void;
  end(err?: Error): void;
  stopped: boolean;
}

export interface Call {
  readonly verb: 'list' | 'watch' | 'create';
  readonly path: string;
  readonly query?: Query;
  readonly body?: unknown;
}

function nameOf(query: Query | undefined): string | undefined {
  const fs = query?.fieldSelector;
  return typeof fs === 'string' && fs.startsWith('metadata.name=') ? fs.slice('metadata.name='.length) : undefined;
}

export class FakeObjectServer {
  readonly calls: Call[] = [];
  private readonly objects = new Map<string, Map<string, Obj>>();
  private readonly watches = new Set<OpenWatch>();
  private rv = 100;
  /** Thrown by the next LISTs, if set. */
  listFailure: Error | undefined;
  tokenAnswer: (path: string, body: TokenRequest) => TokenRequest = () => {
    throw new Error('no token answer set');
  };

  readonly client: PodObjectsClient = {
    list: async <T>(path: string, query?: Query): Promise<T> => {
      this.calls.push({ verb: 'list', path, query });
      if (this.listFailure) throw this.listFailure;
      const name = nameOf(query);
      const items = [...(this.objects.get(path)?.values() ?? [])].filter(
        (o) => name === undefined || o.metadata?.name === name,
      );
      return { items: structuredClone(items), metadata: { resourceVersion: String(this.rv) } } as T;
    },
    watch: <T>(path: string, query: Query, onEvent: (e: WatchEvent<T>) => void): WatchHandle => {
      this.calls.push({ verb: 'watch', path, query });
      let end: (err?: Error) => void = () => {};
      const done = new Promise<void>((resolve, reject) => (end = (err) => (err ? reject(err) : resolve())));
      const w: OpenWatch = {
        path,
        name: nameOf(query),
        onEvent: onEvent as unknown as (e: WatchEvent<Obj>) => void,
        stopped: false,
        end: (err) => {
          this.watches.delete(w);
          end(err);
        },
      };
      this.watches.add(w);
      return {
        done,
        stop: () => {
          w.stopped = true;
          w.end();
        },
      };
    },
    create: async <T>(path: string, body: T): Promise<T> => {
      this.calls.push({ verb: 'create', path, body });
      return this.tokenAnswer(path, body as TokenRequest) as T;
    },
  };

  count(verb: Call['verb'], path?: string): number {
    return this.calls.filter((c) => c.verb === verb && (path === undefined || c.path === path)).length;
  }

  /** Open watches, of one collection path (and name) if given. */
  openWatches(path?: string, name?: string): number {
    return [...this.watches].filter(
      (w) => (path === undefined || w.path === path) && (name === undefined || w.name === name),
    ).length;
  }

  /** Creates or changes an object; open watches that select it hear it. */
  put<O extends Obj>(path: string, obj: O): void {
    const name = obj.metadata?.name ?? '';
    let coll = this.objects.get(path);
    if (!coll) this.objects.set(path, (coll = new Map()));
    const had = coll.has(name);
    const stored: Obj = {
      ...obj,
      metadata: { uid: `uid-${name}`, ...obj.metadata, resourceVersion: String(++this.rv) },
    };
    coll.set(name, stored);
    this.tell(path, name, { type: had ? 'MODIFIED' : 'ADDED', object: structuredClone(stored) });
  }

  /** Changes an object without telling any watch (a change the watch missed: only a relist sees it). */
  putQuietly<O extends Obj>(path: string, obj: O): void {
    const name = obj.metadata?.name ?? '';
    let coll = this.objects.get(path);
    if (!coll) this.objects.set(path, (coll = new Map()));
    coll.set(name, { ...obj, metadata: { uid: `uid-${name}`, ...obj.metadata, resourceVersion: String(++this.rv) } });
  }

  remove(path: string, name: string): void {
    const obj = this.objects.get(path)?.get(name);
    if (!obj) return;
    this.objects.get(path)!.delete(name);
    this.tell(path, name, {
      type: 'DELETED',
      object: { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } },
    });
  }

  bookmark(path: string): void {
    for (const w of [...this.watches])
      if (w.path === path)
        w.onEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(++this.rv) } } });
  }

  /** Every open watch ends with 410 Gone, as when its resourceVersion is compacted away. */
  expireWatches(): void {
    for (const w of [...this.watches]) w.end(new ApiError(410, 'Expired', 'too old resource version'));
  }

  endWatches(): void {
    for (const w of [...this.watches]) w.end();
  }

  private tell(path: string, name: string, e: WatchEvent<Obj>): void {
    for (const w of [...this.watches]) if (w.path === path && (w.name === undefined || w.name === name)) w.onEvent(e);
  }
}
