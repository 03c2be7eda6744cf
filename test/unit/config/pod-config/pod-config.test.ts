// The one desired pod set: what each subscriber is told, the clash rules between sources, when
// every source has been seen, the hold-back of runtime pods of a source that has not answered,
// and the lookups by UID and key.
import { describe, expect, it } from 'vitest';
import { PodConfig, type SourceName } from '../../../../src/config/pod-config/pod-config.js';
import type { PodUpdate, StaticPod } from '../../../../src/config/types.js';
import { memoryLogger } from '../../../../src/log/logger.js';

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

interface Found {
  namespace: string;
  name: string;
  source: string;
}
const found = (entries: Array<[string, Found]>): Map<string, Found> => new Map(entries);

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

  it("holds a runtime API pod back while the API server has not answered, even under a desired static pod's name", () => {
    const { config } = setup(['file', 'api']);
    config.update('file', { op: 'ADD', pod: pod('kube-system/web-n', 'f1', '/m/web.yaml') });
    const released: string[] = [];
    const held = config.holdBack(
      found([['a1', { namespace: 'kube-system', name: 'web-n', source: 'api' }]]),
      (p) => p.source,
      (pods) => released.push(...pods.keys()),
    );
    expect([...held]).toEqual(['a1']);
    config.update('api', { op: 'ADD', pod: pod('kube-system/web-n', 'a1', 'api') });
    config.markSeen('api');
    expect(released).toEqual([]);
  });

  it('has seen all sources once each has answered in full, and is ready once the runtime has been adopted too', () => {
    const { config, changes } = setup();
    const seen: string[] = [];
    config.onSeen((s) => seen.push(s));
    config.feed('file').ready();
    expect(config.seenAllSources()).toBe(false);
    config.adoptionDone();
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

  it('holds the runtime pods of a source that has not answered, and releases only those it no longer gives', () => {
    const { config, told, lines } = setup();
    config.feed('file').ready();
    const released: string[][] = [];
    const held = config.holdBack(
      found([
        ['old-web', { namespace: 'kube-system', name: 'web-n', source: 'http' }],
        ['same-db', { namespace: 'kube-system', name: 'db-n', source: 'http' }],
        ['gone', { namespace: 'kube-system', name: 'gone-n', source: 'http' }],
        ['a-file-pod', { namespace: 'kube-system', name: 'a-n', source: 'file' }],
        ['api-pod', { namespace: 'default', name: 'x', source: 'api' }],
      ]),
      (p) => p.source,
      (pods) => released.push([...pods.keys()]),
    );
    // Only what the unanswered source made; the file source has answered, and no api source is configured.
    expect([...held].sort()).toEqual(['gone', 'old-web', 'same-db']);
    expect(lines.filter((l) => l.includes('Pods from staticPodURL keep running until it answers'))).toHaveLength(1);
    expect(released).toEqual([]);

    const http = config.feed('http');
    http.update({ op: 'ADD', pod: pod('kube-system/db-n', 'same-db', 'http://x/pods') });
    // A new version of a held pod's name: the old one is released (to be stopped) before it is told.
    config.subscribe((u) => told.push(`then released: ${JSON.stringify(released)} at ${u.pod.uid}`));
    http.update({ op: 'ADD', pod: pod('kube-system/web-n', 'new-web', 'http://x/pods') });
    expect(told).toContain('then released: [["old-web"]] at new-web');
    // The source has answered: what it no longer gives is released; the same UID was its worker's to adopt.
    http.ready();
    expect(released).toEqual([['old-web'], ['gone']]);
  });

  it('releases the held runtime pods themselves, though the caller took them out of the map it passed', () => {
    const { config } = setup(['file', 'api']);
    config.feed('file').ready();
    const gone: Found = { namespace: 'kube-system', name: 'kube-proxy-old', source: 'api' };
    const runtime = found([['gone', gone]]);
    const released: Array<[string, Found | undefined]> = [];
    // As start-adoption does: the held UIDs leave what it hands the workers now.
    for (const uid of config.holdBack(
      runtime,
      (p) => p.source,
      (pods) => released.push(...pods),
    ))
      runtime.delete(uid);
    expect(runtime.size).toBe(0);
    config.feed('api').ready();
    expect(released).toEqual([['gone', gone]]);
  });

  it('does not hold a runtime pod whose name another source already gives: it is replaced as any stale pod', () => {
    const { config } = setup();
    config.update('file', { op: 'ADD', pod: pod('kube-system/web-n', 'f1', '/m/web.yaml') });
    const held = config.holdBack(
      found([['old', { namespace: 'kube-system', name: 'web-n', source: 'http' }]]),
      (p) => p.source,
      () => {},
    );
    expect(held.size).toBe(0);
  });

  it('never holds anything for a source that has answered', () => {
    const { config } = setup();
    config.feed('http').ready();
    const held = config.holdBack(
      found([['old', { namespace: 'kube-system', name: 'web-n', source: 'http' }]]),
      (p) => p.source,
      () => {},
    );
    expect(held.size).toBe(0);
  });
});
