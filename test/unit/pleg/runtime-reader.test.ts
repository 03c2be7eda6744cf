// The one cache of runtime state: reads only when nothing newer is cached, one pod's read lists
// only that pod, reads are coalesced, a read never overwrites a newer one, and changes are told.
import { describe, expect, it } from 'vitest';
import { PodCache, type PodCacheChange } from '../../../src/pleg/pod-cache.js';
import { RuntimeReader } from '../../../src/pleg/runtime-reader.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { container, FakeRuntime, sandbox } from './fake-runtime.js';

const A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

function setup() {
  const rt = new FakeRuntime();
  rt.sandboxes = [sandbox('sa', A), sandbox('sb', B)];
  rt.containers = [container('ca', 'sa', A, 'app'), container('cb', 'sb', B, 'app')];
  const cache = new PodCache();
  const reader = new RuntimeReader(rt.service, cache);
  const changes: PodCacheChange[] = [];
  cache.onChange((c) => changes.push(c));
  return { rt, cache, reader, changes };
}

describe('RuntimeReader and the pod cache', () => {
  it('a full read fills it; statuses are asked for only for objects whose state is new', async () => {
    const { rt, cache, reader, changes } = setup();
    await reader.refreshAll();
    expect([...cache.pods().keys()].sort()).toEqual([A, B]);
    expect(cache.get(A).pod?.containers[0]).toMatchObject({ id: 'ca', hasStatus: true });
    expect(changes.map((c) => c.uid).sort()).toEqual([A, B]);
    expect(rt.statusCalls).toBe(4);
    await reader.refreshAll();
    expect(rt.statusCalls).toBe(4);
    rt.setContainerState('cb', ContainerState.CONTAINER_EXITED);
    await reader.refreshAll();
    expect(rt.statusCalls).toBe(5);
    expect(changes.at(-1)).toMatchObject({
      uid: B,
      after: { containers: [{ id: 'cb', state: ContainerState.CONTAINER_EXITED }] },
    });
  });

  it('getNewerThan answers from the cache when a read started after the time given, and reads that one pod otherwise', async () => {
    const { rt, cache, reader } = setup();
    await reader.refreshAll();
    const t = cache.tick();
    const lists = rt.lists;
    // Nothing read since t: one pod's read, filtered by its UID.
    const first = await reader.getNewerThan(A, t);
    expect(first.at).toBeGreaterThan(t);
    expect(rt.lists - lists).toBe(1);
    expect(rt.filteredLists).toBe(1);
    // A full read after t: no more reads for either pod.
    await reader.refreshAll();
    const before = rt.lists;
    await reader.getNewerThan(A, t);
    await reader.getNewerThan(B, t);
    expect(rt.lists).toBe(before);
  });

  it('coalesces: many asking for one pod while its read is in flight cost one more read', async () => {
    const { rt, cache, reader } = setup();
    await reader.refreshAll();
    const t = cache.tick();
    const lists = rt.lists;
    await Promise.all(Array.from({ length: 10 }, () => reader.getNewerThan(A, t)));
    expect(rt.lists - lists).toBeLessThanOrEqual(2);
  });

  it('a full read that started before a pod read does not overwrite what the pod read found', async () => {
    const { rt, cache, reader } = setup();
    await reader.refreshAll();
    let call = 0;
    let podRead: Promise<void> | undefined;
    rt.onList = () => {
      call++;
      // The full read has listed the old state; the pod's read starts after and sees the exit.
      if (call === 1) podRead = reader.refreshPod(A);
      else rt.setContainerState('ca', ContainerState.CONTAINER_EXITED);
    };
    await reader.refreshAll();
    await podRead;
    expect(cache.get(A).pod?.containers[0]?.state).toBe(ContainerState.CONTAINER_EXITED);
  });

  it('a pod gone is gone for both kinds of read, and is told once', async () => {
    const { rt, cache, reader, changes } = setup();
    await reader.refreshAll();
    changes.length = 0;
    rt.removeObject('ca');
    rt.removeObject('sa');
    const t = cache.tick();
    const c = await reader.getNewerThan(A, t);
    expect(c.pod).toBeUndefined();
    expect(c.at).toBeGreaterThan(t);
    await reader.refreshAll();
    expect(changes.map((x) => [x.uid, x.after])).toEqual([[A, undefined]]);
    expect(reader.podOf('cb')).toBe(B);
    expect(reader.podOf('ca')).toBeUndefined();
  });

  it('knows the pod and the state of each object it holds, as its entries change', async () => {
    const { rt, cache, reader } = setup();
    await reader.refreshAll();
    expect([reader.podOf('sa'), reader.podOf('ca'), reader.podOf('cb')]).toEqual([A, A, B]);
    expect([cache.running('sa'), cache.running('ca')]).toEqual([true, true]);
    // A restart: the old container exits, a new one runs in the same pod.
    rt.setContainerState('ca', ContainerState.CONTAINER_EXITED);
    rt.containers.push(container('ca2', 'sa', A, 'app'));
    await reader.refreshAll();
    expect([reader.podOf('ca'), reader.podOf('ca2'), cache.running('ca'), cache.running('ca2')]).toEqual([
      A,
      A,
      false,
      true,
    ]);
    rt.removeObject('ca');
    await reader.refreshAll();
    expect([reader.podOf('ca'), cache.running('ca'), reader.podOf('ca2')]).toEqual([undefined, undefined, A]);
    expect(cache.running('nothing')).toBeUndefined();
  });

  it('a failed read rejects its callers and leaves the cache as it was', async () => {
    const { rt, cache, reader } = setup();
    await reader.refreshAll();
    rt.failLists = true;
    await expect(reader.refreshAll()).rejects.toThrow(/runtime down/);
    await expect(reader.getNewerThan(A, cache.tick())).rejects.toThrow(/runtime down/);
    expect(cache.get(A).pod?.containers[0]?.id).toBe('ca');
  });
});
