import type { PodList } from 'kubernetes-types/core/v1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../../../src/apiserver/api-error.js';
import type { WatchHandle } from '../../../src/apiserver/client.js';
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
