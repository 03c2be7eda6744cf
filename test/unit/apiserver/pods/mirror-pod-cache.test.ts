// The mirror pod cache as a consumer of the node's one pods watch: it keeps the mirror pods only,
// every LIST replaces it and is told to the resync listeners, a deletion is told at once, and a late
// event never undoes a newer write of ours (resourceVersions compared as integers).
import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { MirrorPodCache } from '../../../../src/apiserver/pods/mirror-pod-cache.js';
import type { Informer, ReflectorHandler } from '../../../../src/informer/store.js';

const NODE = 'n1';

/** The pods watch as a test drives it: whatever the handlers are told. */
class FakePods implements Informer<Pod> {
  readonly handlers: ReflectorHandler<Pod>[] = [];
  addHandler(h: ReflectorHandler<Pod>): () => void {
    this.handlers.push(h);
    return () => this.handlers.splice(this.handlers.indexOf(h), 1);
  }
  list(items: Pod[], first = false): void {
    for (const h of this.handlers) h.replaced(items, first);
  }
  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Pod): void {
    for (const h of this.handlers) h.event(type, pod);
  }
}

function mirror(name: string, uid: string, rv: string, phase = 'Pending'): Pod {
  return {
    metadata: {
      name,
      namespace: 'kube-system',
      uid,
      resourceVersion: rv,
      annotations: { 'kubernetes.io/config.mirror': 'hash' },
    },
    spec: { nodeName: NODE, containers: [] },
    status: { phase },
  };
}
const apiPod = (name: string, rv: string): Pod => ({
  metadata: { name, namespace: 'kube-system', uid: `u-${name}`, resourceVersion: rv },
  spec: { nodeName: NODE, containers: [] },
});

function setup() {
  const pods = new FakePods();
  const cache = new MirrorPodCache(pods, NODE);
  const changed: string[] = [];
  let resyncs = 0;
  cache.onChange((k) => changed.push(k));
  cache.onResync(() => resyncs++);
  return { pods, cache, changed, resyncs: () => resyncs };
}

describe('MirrorPodCache on the node pods watch', () => {
  it('is synced by the first LIST, keeps only the mirror pods, and tells every LIST to the resync listeners', () => {
    const { pods, cache, changed, resyncs } = setup();
    expect(cache.hasSynced).toBe(false);
    pods.list([mirror('etcd-n1', 'm1', '5'), apiPod('kube-proxy-x', '6')], true);
    expect(cache.hasSynced).toBe(true);
    expect(cache.keys()).toEqual(['kube-system/etcd-n1']);
    expect(changed).toEqual(['kube-system/etcd-n1']);
    expect(resyncs()).toBe(1);
    // A relist (after a 410) without it: gone, told, and a resync.
    pods.list([apiPod('kube-proxy-x', '6')]);
    expect(cache.keys()).toEqual([]);
    expect(changed).toEqual(['kube-system/etcd-n1', 'kube-system/etcd-n1']);
    expect(resyncs()).toBe(2);
  });

  it('hears a kubectl delete of a mirror at once, and ignores a deletion of another object of the name', () => {
    const { pods, cache, changed } = setup();
    pods.list([mirror('etcd-n1', 'm1', '5')], true);
    pods.event('DELETED', mirror('etcd-n1', 'other', '7'));
    expect(cache.get('kube-system/etcd-n1')?.metadata?.uid).toBe('m1');
    pods.event('DELETED', mirror('etcd-n1', 'm1', '8'));
    expect(cache.get('kube-system/etcd-n1')).toBeUndefined();
    expect(changed.at(-1)).toBe('kube-system/etcd-n1');
    // Events of pods that are not mirrors are the API pod source's.
    const before = changed.length;
    pods.event('ADDED', apiPod('web', '9'));
    expect(changed).toHaveLength(before);
  });

  it('a late event never undoes a newer write of ours', () => {
    const { pods, cache } = setup();
    pods.list([mirror('etcd-n1', 'm1', '5')], true);
    cache.observe(mirror('etcd-n1', 'm1', '20', 'Running'));
    pods.event('MODIFIED', mirror('etcd-n1', 'm1', '12', 'Pending'));
    expect(cache.get('kube-system/etcd-n1')?.status?.phase).toBe('Running');
    pods.event('MODIFIED', mirror('etcd-n1', 'm1', '21', 'Succeeded'));
    expect(cache.get('kube-system/etcd-n1')?.status?.phase).toBe('Succeeded');
    // A mirror recreated under the name (another UID) is taken as it comes.
    pods.event('ADDED', mirror('etcd-n1', 'm2', '22'));
    expect(cache.get('kube-system/etcd-n1')?.metadata?.uid).toBe('m2');
    cache.forget('kube-system/etcd-n1', 'm2');
    expect(cache.get('kube-system/etcd-n1')).toBeUndefined();
    // observe takes only mirrors of this node.
    cache.observe({ ...mirror('x-n1', 'm3', '1'), spec: { nodeName: 'other', containers: [] } });
    expect(cache.get('kube-system/x-n1')).toBeUndefined();
  });
});
