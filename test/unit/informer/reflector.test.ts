// The one list+watch loop (src/informer/reflector.ts) against scripted servers: one LIST, watches
// from the last resourceVersion (BOOKMARKs move it), a LIST again only after a 410; the back-off on
// early ends, the gate while the server is away; and its handlers, which all hear one watch.
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, TransportError } from '../../../src/apiserver/client/api-error.js';
import type { Query, WatchEvent, WatchHandle } from '../../../src/apiserver/client/client.js';
import { API_LIST_WATCH_ERRORS } from '../../../src/apiserver/client/list-watch-errors.js';
import { Reflector } from '../../../src/informer/reflector.js';
import type { ReflectorHandler } from '../../../src/informer/store.js';
import { nullLogger } from '../../../src/log/logger.js';
import { FakeGate } from '../apiserver/client/gate.js';

function podsReflector(
  client: ConstructorParameters<typeof Reflector<Pod>>[0]['client'],
  gate: FakeGate,
  watchSeconds?: () => number,
): Reflector<Pod> {
  const r = new Reflector<Pod>({
    client,
    gate,
    errors: API_LIST_WATCH_ERRORS,
    path: '/api/v1/pods',
    fieldSelector: 'spec.nodeName=n1',
    what: 'pods',
    logger: nullLogger,
    watchSeconds,
  });
  gate.onUp(() => r.serverBack());
  return r;
}

/** The server as the reflector's LIST+watch sees it; a failed request takes the gate down, as the client's report does. */
class FakeServer {
  away = true;
  readonly lists: number[] = [];
  constructor(private readonly gate: FakeGate) {}

  readonly client = {
    list: async <T>(): Promise<T> => {
      this.lists.push(Date.now());
      if (this.away) {
        this.gate.down();
        throw new TransportError('refused', 'connect ECONNREFUSED');
      }
      return { items: [], metadata: { resourceVersion: '1' } } satisfies PodList as T;
    },
    watch: (): WatchHandle => {
      let end: () => void = () => {};
      return { done: new Promise<void>((r) => (end = r)), stop: () => end() };
    },
  };
}

describe('Reflector while the server is away', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('LISTs as soon as the server is back after LISTs that found no server, without a growing back-off', async () => {
    const gate = new FakeGate();
    const api = new FakeServer(gate);
    const cache = podsReflector(api.client, gate);
    cache.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(api.lists).toHaveLength(1);
    // The server flaps: back for a moment, gone again at each LIST. A back-off would double each time.
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(1500);
      gate.up();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(api.lists).toHaveLength(6);
    // Back for good, 300 ms after a LIST: the next one no sooner than 1 s after the last, not later.
    await vi.advanceTimersByTimeAsync(300);
    api.away = false;
    gate.up();
    await vi.advanceTimersByTimeAsync(699);
    expect(api.lists).toHaveLength(6);
    await vi.advanceTimersByTimeAsync(1);
    expect(api.lists).toHaveLength(7);
    expect(cache.synced).toBe(true);
    const stopping = cache.stop();
    await vi.advanceTimersByTimeAsync(0);
    await stopping;
  });
});

/** A server whose watches the test drives: events, a clean end, a failure. */
class ScriptedServer {
  readonly calls: { kind: 'list' | 'watch'; resourceVersion?: string; timeoutSeconds?: number }[] = [];
  items: Pod[] = [];
  private current: { onEvent: (e: WatchEvent<Pod>) => void; end: (err?: Error) => void } | undefined;
  readonly client = {
    list: async <T>(): Promise<T> => {
      this.calls.push({ kind: 'list' });
      return { items: this.items, metadata: { resourceVersion: '10' } } satisfies PodList as T;
    },
    watch: <T>(_path: string, query: Query, onEvent: (e: WatchEvent<T>) => void): WatchHandle => {
      this.calls.push({
        kind: 'watch',
        resourceVersion: String(query.resourceVersion),
        timeoutSeconds: Number(query.timeoutSeconds),
      });
      let end: (err?: Error) => void = () => {};
      const done = new Promise<void>((resolve, reject) => (end = (err) => (err ? reject(err) : resolve())));
      this.current = { onEvent: onEvent as (e: WatchEvent<Pod>) => void, end };
      return { done, stop: () => end() };
    },
  };
  emit(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Pod): void {
    this.current?.onEvent({ type, object });
  }
  bookmark(rv: string): void {
    this.current?.onEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: rv } } });
  }
  end(err?: Error): void {
    this.current?.end(err);
  }
  kinds(): string[] {
    return this.calls.map((c) => (c.kind === 'watch' ? `watch@${c.resourceVersion}` : 'list'));
  }
}

describe('Reflector re-watches from the last resourceVersion', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  async function started(): Promise<{ api: ScriptedServer; cache: Reflector<Pod>; gate: FakeGate }> {
    const gate = new FakeGate();
    const api = new ScriptedServer();
    const cache = podsReflector(api.client, gate, () => 300);
    cache.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(api.kinds()).toEqual(['list', 'watch@10']);
    return { api, cache, gate };
  }

  it('a watch that ends after its timeout is opened again at once from the last BOOKMARK, with no LIST', async () => {
    const { api, cache } = await started();
    api.bookmark('57');
    await vi.advanceTimersByTimeAsync(300_000);
    api.end();
    await vi.advanceTimersByTimeAsync(0);
    expect(api.kinds()).toEqual(['list', 'watch@10', 'watch@57']);
    await stopCache(cache);
  });

  it('a watch that ends early, or is cut, is opened again after the back-off, still with no LIST', async () => {
    const { api, cache } = await started();
    api.end();
    await vi.advanceTimersByTimeAsync(999);
    expect(api.kinds()).toEqual(['list', 'watch@10']);
    await vi.advanceTimersByTimeAsync(600);
    expect(api.kinds()).toEqual(['list', 'watch@10', 'watch@10']);
    api.end(new TransportError('reset', 'watch stream cut'));
    await vi.advanceTimersByTimeAsync(1999);
    expect(api.kinds()).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(1100);
    expect(api.kinds()).toEqual(['list', 'watch@10', 'watch@10', 'watch@10']);
    await stopCache(cache);
  });

  it('a watch whose server went away is opened again from its resourceVersion when the server is back', async () => {
    const { api, cache, gate } = await started();
    api.bookmark('80');
    await vi.advanceTimersByTimeAsync(60_000);
    gate.down();
    api.end(new TransportError('reset', 'watch stream cut'));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(api.kinds()).toHaveLength(2);
    gate.up();
    await vi.advanceTimersByTimeAsync(0);
    expect(api.kinds()).toEqual(['list', 'watch@10', 'watch@80']);
    await stopCache(cache);
  });

  it('LISTs once after a 410 Gone, then watches from the new list', async () => {
    const { api, cache } = await started();
    await vi.advanceTimersByTimeAsync(60_000);
    api.end(new ApiError(410, 'Expired', 'too old resource version: 10 (20)'));
    await vi.advanceTimersByTimeAsync(0);
    expect(api.kinds()).toEqual(['list', 'watch@10', 'list', 'watch@10']);
    await stopCache(cache);
  });
});

describe('Reflector: what it asks, and what it lists again for', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('asks every watch to end after 5 to 10 minutes, randomized per watch, with bookmarks', async () => {
    const gate = new FakeGate();
    const api = new ScriptedServer();
    const r = podsReflector(api.client, gate);
    r.start();
    for (let i = 0; i < 20; i++) {
      await vi.advanceTimersByTimeAsync(30_000);
      api.end();
    }
    await vi.advanceTimersByTimeAsync(0);
    const timeouts = api.calls.filter((c) => c.kind === 'watch').map((c) => c.timeoutSeconds!);
    expect(timeouts).toHaveLength(21);
    for (const t of timeouts) (expect(t).toBeGreaterThanOrEqual(300), expect(t).toBeLessThanOrEqual(600));
    expect(new Set(timeouts).size).toBeGreaterThan(1);
    expect(api.kinds().filter((k) => k === 'list')).toHaveLength(1);
    await stopCache(r);
  });

  it('an event that could not be read, or an answer over the cap, lists again (something was missed)', async () => {
    const gate = new FakeGate();
    const api = new ScriptedServer();
    const r = podsReflector(api.client, gate, () => 300);
    r.start();
    await vi.advanceTimersByTimeAsync(0);
    api.end(new TransportError('other', 'watch stream: bad JSON line (12 bytes)'));
    await vi.advanceTimersByTimeAsync(1600);
    expect(api.kinds()).toEqual(['list', 'watch@10', 'list', 'watch@10']);
    api.end(new ApiError(200, 'ResponseTooLarge', 'watch /api/v1/pods: a watch event is larger than 8 MiB'));
    await vi.advanceTimersByTimeAsync(3100);
    expect(api.kinds()).toEqual(['list', 'watch@10', 'list', 'watch@10', 'list', 'watch@10']);
    await stopCache(r);
  });
});

describe('Reflector handlers: one watch, several consumers', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const pod = (name: string, rv: string): Pod => ({
    metadata: { name, namespace: 'default', uid: `u-${name}`, resourceVersion: rv },
  });

  function recorder(): { seen: string[]; handler: ReflectorHandler<Pod> } {
    const seen: string[] = [];
    return {
      seen,
      handler: {
        replaced: (items, first) =>
          seen.push(`${first ? 'first ' : ''}list ${items.map((p) => p.metadata?.name).join(',')}`),
        event: (type, p) => seen.push(`${type} ${p.metadata?.name}@${p.metadata?.resourceVersion}`),
      },
    };
  }

  it('every handler hears each LIST and each event of the one watch; a handler added later hears the collection first', async () => {
    const gate = new FakeGate();
    const api = new ScriptedServer();
    api.items = [pod('a', '9')];
    const r = podsReflector(api.client, gate, () => 300);
    const one = recorder();
    const two = recorder();
    r.addHandler(one.handler);
    const removeTwo = r.addHandler(two.handler);
    r.start();
    await vi.advanceTimersByTimeAsync(0);
    api.emit('ADDED', pod('b', '11'));
    api.emit('DELETED', pod('a', '12'));
    const late = recorder();
    r.addHandler(late.handler);
    removeTwo();
    api.emit('MODIFIED', pod('b', '13'));
    expect(one.seen).toEqual(['first list a', 'ADDED b@11', 'DELETED a@12', 'MODIFIED b@13']);
    expect(two.seen).toEqual(['first list a', 'ADDED b@11', 'DELETED a@12']);
    expect(late.seen).toEqual(['first list b', 'MODIFIED b@13']);
    expect(r.list().map((p) => p.metadata?.resourceVersion)).toEqual(['13']);
    // A 410: one LIST, heard by every handler as a replacement.
    api.items = [pod('b', '13')];
    await vi.advanceTimersByTimeAsync(60_000);
    api.end(new ApiError(410, 'Expired', 'too old resource version'));
    await vi.advanceTimersByTimeAsync(0);
    expect(one.seen.at(-1)).toBe('list b');
    expect(late.seen.at(-1)).toBe('list b');
    expect(api.kinds()).toEqual(['list', 'watch@10', 'list', 'watch@10']);
    await stopCache(r);
  });
});

async function stopCache(cache: Reflector<Pod>): Promise<void> {
  const stopping = cache.stop();
  await vi.advanceTimersByTimeAsync(0);
  await stopping;
}
