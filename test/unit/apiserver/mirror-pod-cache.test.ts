import type { Pod, PodList } from 'kubernetes-types/core/v1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, TransportError } from '../../../src/apiserver/api-error.js';
import type { Query, WatchEvent, WatchHandle } from '../../../src/apiserver/client.js';
import { MirrorPodCache } from '../../../src/apiserver/mirror-pod-cache.js';
import { nullLogger } from '../../../src/log/logger.js';
import { FakeGate } from './gate.js';

/** The server as the cache's LIST+watch sees it; a failed request takes the gate down, as the client's report does. */
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

describe('MirrorPodCache', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('LISTs as soon as the server is back after LISTs that found no server, without a growing back-off', async () => {
    const gate = new FakeGate();
    const api = new FakeServer(gate);
    const cache = new MirrorPodCache(api.client, gate, 'n1', nullLogger);
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
    expect(cache.hasSynced).toBe(true);
    const stopping = cache.stop();
    await vi.advanceTimersByTimeAsync(0);
    await stopping;
  });
});

/** A server whose watches the test drives: events, a clean end, a failure. */
class ScriptedServer {
  readonly calls: { kind: 'list' | 'watch'; resourceVersion?: string }[] = [];
  private current: { onEvent: (e: WatchEvent<Pod>) => void; end: (err?: Error) => void } | undefined;
  readonly client = {
    list: async <T>(): Promise<T> => {
      this.calls.push({ kind: 'list' });
      return { items: [], metadata: { resourceVersion: '10' } } satisfies PodList as T;
    },
    watch: <T>(_path: string, query: Query, onEvent: (e: WatchEvent<T>) => void): WatchHandle => {
      this.calls.push({ kind: 'watch', resourceVersion: String(query.resourceVersion) });
      let end: (err?: Error) => void = () => {};
      const done = new Promise<void>((resolve, reject) => (end = (err) => (err ? reject(err) : resolve())));
      this.current = { onEvent: onEvent as (e: WatchEvent<Pod>) => void, end };
      return { done, stop: () => end() };
    },
  };
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

describe('MirrorPodCache re-watches from the last resourceVersion (as the reflector does)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  async function started(): Promise<{ api: ScriptedServer; cache: MirrorPodCache; gate: FakeGate }> {
    const gate = new FakeGate();
    const api = new ScriptedServer();
    const cache = new MirrorPodCache(api.client, gate, 'n1', nullLogger, () => 300_000);
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

async function stopCache(cache: MirrorPodCache): Promise<void> {
  const stopping = cache.stop();
  await vi.advanceTimersByTimeAsync(0);
  await stopping;
}
