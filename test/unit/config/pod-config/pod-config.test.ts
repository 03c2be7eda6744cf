// The one desired pod set: what each subscriber is told, the clash rules between sources, when
// every source has been seen, and the lookups by UID and key (what becomes of the runtime's pods at
// start: runtime-adoption.test.ts).
import { describe, expect, it } from 'vitest';
import { PodConfig, type SourceName } from '../../../../src/config/pod-config/pod-config.js';
import type { PodUpdate, StaticPod } from '../../../../src/config/types.js';
import { memoryLogger } from '../../../../src/log/logger.js';
import { adoptionOf } from '../../../support/runtime-pods.js';

const pod = (key: string, uid: string, file: string, annotations: Record<string, string> = {}): StaticPod => ({
  uid,
  key,
  file,
  pod: {
    metadata: { name: key.split('/')[1]!, namespace: key.split('/')[0]!, uid, annotations },
    spec: { containers: [] },
  },
});

function setup(sources: SourceName[] = ['file', 'http']) {
  const { logger, lines } = memoryLogger();
  const config = new PodConfig({ sources, logger });
  const told: string[] = [];
  config.subscribe((u: PodUpdate) =>
    told.push(`${u.op} ${u.pod.uid}${u.op === 'UPDATE' ? ` (was ${u.previous.uid})` : ''}`),
  );
  let changes = 0;
  config.onChange(() => changes++);
  return { config, told, lines, changes: () => changes };
}

describe('PodConfig', () => {
  it('tells every subscriber each change in order, and answers by UID and key', () => {
    const { config, told } = setup(['file']);
    const a = pod('kube-system/a-n', 'u1', '/m/a.yaml');
    const feed = config.feed('file');
    feed.update({ op: 'ADD', pod: a });
    expect(config.podByUid('u1')).toBe(a);
    expect(config.podByKey('kube-system/a-n')).toBe(a);
    const a2 = pod('kube-system/a-n', 'u2', '/m/a.yaml');
    feed.update({ op: 'UPDATE', pod: a2, previous: a });
    expect(config.podByUid('u1')).toBeUndefined();
    expect(config.podByUid('u2')).toBe(a2);
    feed.update({ op: 'REMOVE', pod: a2 });
    expect(config.podByKey('kube-system/a-n')).toBeUndefined();
    expect(config.podByUid('u2')).toBeUndefined();
    expect(told).toEqual(['ADD u1', 'UPDATE u2 (was u1)', 'REMOVE u2']);
  });

  it('refuses a pod whose UID another source already has, and takes it once the first is gone', () => {
    const { config, told, lines } = setup();
    const fromFile = pod('kube-system/a-n', 'same', '/m/a.yaml');
    const fromHttp = pod('kube-system/b-n', 'same', 'http://x/pods');
    config.update('file', { op: 'ADD', pod: fromFile });
    config.update('http', { op: 'ADD', pod: fromHttp });
    expect(told).toEqual(['ADD same']);
    expect(config.podByUid('same')).toBe(fromFile);
    expect(lines.filter((l) => l.includes('another source has a pod with the same UID'))).toHaveLength(1);
    config.update('file', { op: 'REMOVE', pod: fromFile });
    expect(told).toEqual(['ADD same', 'REMOVE same', 'ADD same']);
    expect(config.podByUid('same')).toBe(fromHttp);
  });

  it('does not take a mirror pod from the API server for an API pod: it never clashes with its static pod', () => {
    const { config, told, lines } = setup(['file', 'http', 'api']);
    const staticPod = pod('kube-system/etcd-n', 'f1', '/m/etcd.yaml');
    const mirror = pod('kube-system/etcd-n', 'm1', 'api', { 'kubernetes.io/config.mirror': 'f1' });
    config.update('file', { op: 'ADD', pod: staticPod });
    config.update('api', { op: 'ADD', pod: mirror });
    config.update('file', { op: 'REMOVE', pod: staticPod });
    expect(told).toEqual(['ADD f1', 'REMOVE f1']);
    expect(lines.filter((l) => l.includes('Static pod ignored'))).toHaveLength(0);
    // An API pod proper is desired, but gets no mirror pod: the API side's view has static pods only.
    const apiPod = pod('default/web', 'a1', 'api');
    config.update('api', { op: 'ADD', pod: apiPod });
    expect(config.all()).toEqual([apiPod]);
    expect(config.staticPods().list()).toEqual([]);
    expect(config.staticPods().podByUid('a1')).toBeUndefined();
    expect(config.podByUid('a1')).toBe(apiPod);
  });

  it('a static pod and an API pod of the same namespace/name are both desired (keyed by UID, as the kubelet), and the log names both', () => {
    const { config, told, lines } = setup(['file', 'api']);
    const staticPod = pod('kube-system/web-n', 'f1', '/m/web.yaml');
    const apiPod = pod('kube-system/web-n', 'a1', 'api:/api/v1/namespaces/kube-system/pods/web-n');
    config.update('file', { op: 'ADD', pod: staticPod });
    config.update('api', { op: 'ADD', pod: apiPod });
    expect(told).toEqual(['ADD f1', 'ADD a1']);
    expect(
      config
        .all()
        .map((p) => p.uid)
        .sort(),
    ).toEqual(['a1', 'f1']);
    expect(config.podByUid('a1')).toBe(apiPod);
    expect(config.apiPodByUid('a1')).toBe(apiPod);
    // The API side's static view (mirror pods) has the static one only.
    expect(config.staticPods().podByKey('kube-system/web-n')).toBe(staticPod);
    expect(config.staticPods().list()).toEqual([staticPod]);
    expect(lines.filter((l) => l.includes('Static pod ignored'))).toEqual([]);
    const shared = lines.filter((l) => l.includes('A static pod and an API pod have the same name'));
    expect(shared).toHaveLength(1);
    expect(shared[0]).toContain('"staticPodUID":"f1"');
    expect(shared[0]).toContain('"apiPodUID":"a1"');
    expect(shared[0]).toContain('/m/web.yaml');
    // Either goes alone: the other stays.
    config.update('api', { op: 'REMOVE', pod: apiPod });
    config.update('api', { op: 'ADD', pod: { ...apiPod, uid: 'a2' } });
    config.update('file', { op: 'REMOVE', pod: staticPod });
    expect(told).toEqual(['ADD f1', 'ADD a1', 'REMOVE a1', 'ADD a2', 'REMOVE f1']);
    expect(config.all().map((p) => p.uid)).toEqual(['a2']);
    expect(lines.filter((l) => l.includes('A static pod and an API pod have the same name'))).toHaveLength(2);
  });

  it('has seen all sources once each has answered in full, and is ready once the runtime has been adopted too', async () => {
    const { config, changes } = setup();
    const seen: string[] = [];
    config.onSeen((s) => seen.push(s));
    const adopted = adoptionOf(config, []);
    config.feed('file').ready();
    expect(config.seenAllSources()).toBe(false);
    await adopted;
    expect(config.ready()).toBe(false);
    const before = changes();
    config.feed('http').ready();
    config.feed('http').ready();
    expect(seen).toEqual(['file', 'http']);
    expect(config.seenAllSources()).toBe(true);
    expect(config.ready()).toBe(true);
    expect(config.staticPods().ready()).toBe(true);
    expect(changes()).toBe(before + 1);
  });
});
