// The pod cache on its own: it reads nothing, keeps what the reads wrote with their times, never lets
// an older read overwrite a newer one, and tells each change of a pod's objects once.
import { describe, expect, it } from 'vitest';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { PodCache, type PodCacheChange } from '../../../src/pleg/pod-cache.js';
import { runtimePodOf } from '../../support/runtime-pods.js';

const A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

describe('PodCache', () => {
  it('answers get and getNewerThan from what was set, and keeps the newer of two reads', () => {
    const cache = new PodCache();
    const changes: PodCacheChange[] = [];
    cache.onChange((c) => changes.push(c));
    const first = cache.tick();
    const second = cache.tick();
    const pod = runtimePodOf({ uid: A, name: 'a' });
    cache.set(A, pod, second, true);
    expect(cache.get(A)).toEqual({ pod, at: second });
    expect(cache.getNewerThan(A, first)?.pod).toBe(pod);
    expect(cache.getNewerThan(A, second)).toBeUndefined();
    // A read that started earlier answers later: it does not overwrite.
    cache.set(A, undefined, first, true);
    expect(cache.get(A).pod).toBe(pod);
    expect([cache.podOf(`c-${A}`), cache.running(`c-${A}`)]).toEqual([A, true]);
    const exited = structuredClone(pod);
    exited.containers[0]!.state = ContainerState.CONTAINER_EXITED;
    cache.set(A, exited, cache.tick(), true);
    expect(cache.running(`c-${A}`)).toBe(false);
    expect(changes.map((c) => [c.before?.containers[0]?.state, c.after?.containers[0]?.state])).toEqual([
      [undefined, ContainerState.CONTAINER_RUNNING],
      [ContainerState.CONTAINER_RUNNING, ContainerState.CONTAINER_EXITED],
    ]);
  });

  it('a full read covers every pod it did not find, except those it left to their creations', () => {
    const cache = new PodCache();
    cache.set(A, runtimePodOf({ uid: A, name: 'a' }), cache.tick(), true);
    const full = cache.tick();
    cache.setAll(new Map(), full, new Set([A]));
    expect(cache.has(A)).toBe(true);
    expect(cache.get('other').at).toBe(full);
    cache.setAll(new Map(), cache.tick(), new Set());
    expect(cache.has(A)).toBe(false);
    expect(cache.pods().size).toBe(0);
  });
});
