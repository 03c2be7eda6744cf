// The reflector's collection: what a LIST or an event changes is told to onChange once, by key,
// and only when it changed (never for the first LIST); handlers hear everything.
import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { ObjectStore, type ReflectorHandler } from '../../../src/informer/store.js';

const pod = (name: string, rv: string, uid = `uid-${name}`): Pod => ({
  metadata: { namespace: 'ns', name, uid, resourceVersion: rv },
});

describe('ObjectStore', () => {
  it('tells onChange what a relist or an event changed, not what it repeated, never the first LIST', () => {
    const changed: string[] = [];
    const store = new ObjectStore<Pod>((key) => changed.push(key));
    expect(store.synced).toBe(false);
    expect(store.replace([pod('a', '1'), pod('b', '1')])).toBe(true);
    expect(store.synced).toBe(true);
    expect(changed).toEqual([]);
    // b unchanged, a at a new version, c new, and a d that is gone by the next LIST.
    expect(store.replace([pod('a', '2'), pod('b', '1'), pod('c', '1')])).toBe(false);
    expect(changed).toEqual(['ns/a', 'ns/c']);
    changed.length = 0;
    store.apply('MODIFIED', pod('b', '1'));
    store.apply('MODIFIED', pod('b', '1', 'other-uid'));
    store.apply('DELETED', pod('c', '2'));
    store.apply('DELETED', pod('c', '2'));
    expect(changed).toEqual(['ns/b', 'ns/c']);
    expect(store.list().map((p) => p.metadata?.name)).toEqual(['a', 'b']);
    expect(store.get('ns/b')?.metadata?.uid).toBe('other-uid');
  });

  it('a handler hears every LIST and event; one added after the first LIST hears the collection at once', () => {
    const store = new ObjectStore<Pod>();
    const heard = (name: string, log: string[]): ReflectorHandler<Pod> => ({
      replaced: (items, first) => void log.push(`${name} replaced ${items.length} first=${first}`),
      event: (type, obj) => void log.push(`${name} ${type} ${obj.metadata?.name}`),
    });
    const log: string[] = [];
    store.addHandler(heard('early', log));
    store.replace([pod('a', '1')]);
    const remove = store.addHandler(heard('late', log));
    store.apply('ADDED', pod('b', '2'));
    remove();
    store.replace([pod('a', '3')]);
    expect(log).toEqual([
      'early replaced 1 first=true',
      'late replaced 1 first=true',
      'early ADDED b',
      'late ADDED b',
      'early replaced 1 first=false',
    ]);
  });
});
