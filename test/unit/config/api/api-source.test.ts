// The API pods source on the node's one pods watch (the shared reflector) against a scripted
// client: LIST, then WATCH from its resourceVersion with bookmarks; a watch that ends resumes from
// the last resourceVersion, a 410 lists again; mirror pods and pods that cannot run here are never
// desired; the desired set hears ADD/UPDATE/REMOVE and the source is seen after its first LIST, and
// not before (so runtime API pods stay held).
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { ApiError, TransportError } from '../../../../src/apiserver/client/api-error.js';
import { MirrorPodCache } from '../../../../src/apiserver/pods/mirror-pod-cache.js';
import { API_LIST_WATCH_ERRORS } from '../../../../src/apiserver/client/list-watch-errors.js';
import { ApiPodSource } from '../../../../src/config/api/api-source.js';
import type { ListWatchClient } from '../../../../src/informer/list-watch.js';
import { Reflector } from '../../../../src/informer/reflector.js';
import { PodConfig } from '../../../../src/config/pod-config/pod-config.js';
import type { PodUpdate } from '../../../../src/config/types.js';
import { memoryLogger } from '../../../../src/log/logger.js';
import { adoptionOf, runtimePodOf } from '../../../support/runtime-pods.js';
import { waitFor } from '../../../support/wait.js';

type Ev = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: Pod };

const NODE = 'n1';

function apiPod(name: string, uid: string, rv: string, extra: Partial<Pod> = {}): Pod {
  return {
    metadata: { name, namespace: 'default', uid, resourceVersion: rv, ...(extra.metadata ?? {}) },
    spec: { nodeName: NODE, containers: [{ name: 'c', image: 'busybox' }], ...(extra.spec ?? {}) },
    status: extra.status ?? { phase: 'Pending' },
  };
}

class FakeClient implements ListWatchClient {
  readonly calls: string[] = [];
  lists: (PodList | Error)[] = [];
  private current: { emit: (e: Ev) => void; end: (err?: Error) => void } | undefined;

  async list<T>(path: string, query?: Record<string, unknown>): Promise<T> {
    this.calls.push(`LIST ${path} ${String(query?.fieldSelector)}`);
    const next = this.lists.shift();
    if (!next) throw new TransportError('refused', 'connect ECONNREFUSED');
    if (next instanceof Error) throw next;
    return next as T;
  }

  watch<T>(
    path: string,
    query: Record<string, unknown>,
    onEvent: (e: { type: Ev['type']; object: T }) => void,
  ): { done: Promise<void>; stop(): void } {
    this.calls.push(
      `WATCH ${path} rv=${String(query.resourceVersion)} bookmarks=${String(query.allowWatchBookmarks)} ${String(query.fieldSelector)}`,
    );
    let end!: (err?: Error) => void;
    const done = new Promise<void>((resolve, reject) => (end = (err) => (err ? reject(err) : resolve())));
    this.current = { emit: (e) => onEvent(e as { type: Ev['type']; object: T }), end };
    return { done, stop: () => end() };
  }

  emit(e: Ev): void {
    this.current!.emit(e);
  }
  endWatch(err?: Error): void {
    const c = this.current!;
    this.current = undefined;
    c.end(err);
  }
  get watching(): boolean {
    return this.current !== undefined;
  }
}

function setup(lists: (PodList | Error)[]) {
  const client = new FakeClient();
  client.lists = lists;
  const { logger, lines } = memoryLogger();
  const config = new PodConfig({ sources: ['file', 'api'], logger });
  const told: string[] = [];
  config.subscribe((u: PodUpdate) => told.push(`${u.op} ${u.pod.key} ${u.pod.uid}`));
  const gate = { usable: true, onUp: () => {} };
  const refusals: string[] = [];
  const refused = (p: { namespace: string; name: string; uid: string }, reason: string, message: string) =>
    refusals.push(`${p.namespace}/${p.name} ${p.uid} ${reason} ${message}`);
  const pods = new Reflector<Pod>({
    client,
    gate,
    errors: API_LIST_WATCH_ERRORS,
    path: '/api/v1/pods',
    fieldSelector: `spec.nodeName=${NODE}`,
    what: 'pods',
    logger,
    backoff: { initialMs: 1, maxMs: 2, jitter: 0, resetAfterMs: 0 },
    watchSeconds: () => 300,
  });
  const source = new ApiPodSource({ nodeName: NODE, events: config.feed('api'), logger, refused });
  source.attach(pods);
  // The node's one watch: the source hears it, its owner (the API side) starts and stops it.
  return { client, config, told, lines, source, refusals, pods, start: () => pods.start(), stop: () => pods.stop() };
}

const list = (rv: string, items: Pod[]): PodList => ({ metadata: { resourceVersion: rv }, items });

/** The runtime held API pod `running-api` (default/web) at start: adopted once the manifests are read; what the policy stops. */
async function adoptRunningApiPod(config: PodConfig): Promise<string[]> {
  const released: string[] = [];
  const running = runtimePodOf({ uid: 'running-api', namespace: 'default', name: 'web', source: 'api' });
  const adopted = adoptionOf(config, [running], { stop: (uid) => void released.push(uid) });
  config.feed('file').ready();
  await adopted;
  return released;
}

describe('ApiPodSource', () => {
  it('lists, is seen after the first list, then watches from its resourceVersion with bookmarks', async () => {
    const mirror = apiPod('etcd-n1', 'm1', '5', {
      metadata: {
        name: 'etcd-n1',
        namespace: 'kube-system',
        uid: 'm1',
        annotations: { 'kubernetes.io/config.mirror': 'abc' },
      },
    });
    const { client, config, told, start, stop } = setup([list('10', [apiPod('web', 'u1', '9'), mirror])]);
    expect(config.hasSeen('api')).toBe(false);
    start();
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the source to get there' });
    expect(config.hasSeen('api')).toBe(true);
    expect(client.calls).toEqual([
      `LIST /api/v1/pods spec.nodeName=${NODE}`,
      `WATCH /api/v1/pods rv=10 bookmarks=true spec.nodeName=${NODE}`,
    ]);
    // The mirror pod is not an API pod.
    expect(told).toEqual(['ADD default/web u1']);
    const p = config.podByUid('u1')!;
    expect(p.pod.metadata.annotations['kubernetes.io/config.source']).toBe('api');
    expect(config.sourceOfUid('u1')).toBe('api');
    await stop();
  });

  it('turns watch events into ADD/UPDATE/REMOVE, ignores status-only changes and mirror pods, resumes from a bookmark', async () => {
    const { client, told, start, stop, pods } = setup([list('10', [])]);
    start();
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the source to get there' });
    client.emit({ type: 'ADDED', object: apiPod('web', 'u1', '11') });
    client.emit({ type: 'MODIFIED', object: apiPod('web', 'u1', '12', { status: { phase: 'Running' } }) });
    client.emit({
      type: 'MODIFIED',
      object: apiPod('web', 'u1', '13', {
        metadata: { name: 'web', namespace: 'default', uid: 'u1', labels: { a: 'b' } },
      }),
    });
    client.emit({
      type: 'ADDED',
      object: apiPod('etcd-n1', 'm1', '14', {
        metadata: {
          name: 'etcd-n1',
          namespace: 'default',
          uid: 'm1',
          annotations: { 'kubernetes.io/config.mirror': 'x' },
        },
      }),
    });
    client.emit({ type: 'DELETED', object: apiPod('web', 'other-uid', '15') });
    client.emit({ type: 'DELETED', object: apiPod('web', 'u1', '16') });
    client.emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } });
    expect(told).toEqual(['ADD default/web u1', 'UPDATE default/web u1', 'REMOVE default/web u1']);
    expect(pods.lastResourceVersion).toBe('20');
    // A clean end (the server's timeout): the next watch starts at the bookmark, no LIST.
    client.endWatch();
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the source to get there' });
    expect(client.calls.filter((c) => c.startsWith('LIST'))).toHaveLength(1);
    expect(client.calls.at(-1)).toContain('rv=20');
    await stop();
  });

  it('lists again on a 410 Expired, and removes what the new list lacks', async () => {
    const { client, told, start, stop } = setup([
      list('10', [apiPod('a', 'ua', '8'), apiPod('b', 'ub', '9')]),
      list('50', [apiPod('b', 'ub', '9'), apiPod('c', 'uc', '40')]),
    ]);
    start();
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the source to get there' });
    client.endWatch(new ApiError(410, 'Expired', 'too old resource version'));
    await waitFor(() => client.calls.length === 4, { timeoutMs: 2000, what: 'the source to get there' });
    expect(client.calls.map((c) => c.split(' ')[0])).toEqual(['LIST', 'WATCH', 'LIST', 'WATCH']);
    expect(client.calls[3]).toContain('rv=50');
    expect(told).toEqual(['ADD default/a ua', 'ADD default/b ub', 'ADD default/c uc', 'REMOVE default/a ua']);
    await stop();
  });

  it('is not seen while the LIST fails, so runtime API pods stay held and running', async () => {
    const { client, config, start, stop } = setup([new Error('connection refused'), new Error('connection refused')]);
    const released = await adoptRunningApiPod(config);
    expect(released).toEqual([]);
    start();
    await waitFor(() => client.calls.length >= 3, { timeoutMs: 2000, what: 'the source to get there' });
    expect(config.hasSeen('api')).toBe(false);
    expect(released).toEqual([]);
    // The server answers, without that pod: only now is it released to be stopped.
    client.lists.push(list('7', []));
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the source to get there' });
    expect(config.hasSeen('api')).toBe(true);
    expect(released).toEqual(['running-api']);
    await stop();
  });

  it('keeps a running API pod the first list still gives: adopted, not released', async () => {
    const { client, config, start, stop } = setup([list('3', [apiPod('web', 'running-api', '2')])]);
    const released = await adoptRunningApiPod(config);
    start();
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the source to get there' });
    expect(released).toEqual([]);
    expect(config.podByUid('running-api')?.key).toBe('default/web');
    await stop();
  });

  it('refuses a pod with a volume kind bootlet does not mount, naming it, and never desires it', async () => {
    const cm = apiPod('cm', 'ucm', '4', {
      spec: {
        nodeName: NODE,
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [{ name: 'cfg', persistentVolumeClaim: { claimName: 'x' } }],
      },
    });
    const { client, told, lines, start, stop, refusals } = setup([list('5', [cm])]);
    start();
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the source to get there' });
    expect(told).toEqual([]);
    expect(
      lines.some(
        (l) => l.includes('API pod refused') && l.includes('spec.volumes[0].persistentVolumeClaim: Unsupported value'),
      ),
    ).toBe(true);
    expect(refusals).toEqual([
      'default/cm ucm FailedMount spec.volumes[0].persistentVolumeClaim: Unsupported value: volume "cfg": bootlet mounts only hostPath, emptyDir, configMap, secret, projected, downwardAPI and image volumes',
    ]);
    await stop();
  });

  it('a static pod and an API pod of the same written name both stay desired', async () => {
    const { client, config, start, stop } = setup([list('5', [apiPod('web', 'u-api', '4')])]);
    config.update('file', {
      op: 'ADD',
      pod: {
        uid: 'f1',
        key: 'default/web-n1',
        file: '/m/web.yaml',
        pod: {
          metadata: { name: 'web-n1', namespace: 'default', uid: 'f1', annotations: {} },
          spec: { containers: [] },
        },
      },
    });
    start();
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the source to get there' });
    // The mirror of the static pod (same name as the static pod) is listed too, and is no API pod.
    client.emit({
      type: 'ADDED',
      object: apiPod('web-n1', 'mirror', '6', {
        metadata: {
          name: 'web-n1',
          namespace: 'default',
          uid: 'mirror',
          annotations: { 'kubernetes.io/config.mirror': 'f1' },
        },
      }),
    });
    expect(
      config
        .all()
        .map((p) => p.uid)
        .sort(),
    ).toEqual(['f1', 'u-api']);
    await stop();
  });

  it('on a deletionTimestamp, tells the pod with the shorter grace period, then its REMOVE, once', async () => {
    const { client, config, start, stop } = setup([
      list('5', [
        apiPod('web', 'u1', '4', {
          spec: { nodeName: NODE, terminationGracePeriodSeconds: 30, containers: [{ name: 'c', image: 'busybox' }] },
        }),
      ]),
    ]);
    const seen: string[] = [];
    config.subscribe((u) => seen.push(`${u.op} ${u.pod.uid} grace=${u.pod.pod.spec?.terminationGracePeriodSeconds}`));
    start();
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the watch' });
    const deleting = (rv: string, grace: number) =>
      apiPod('web', 'u1', rv, {
        metadata: {
          name: 'web',
          namespace: 'default',
          uid: 'u1',
          deletionTimestamp: '2026-01-01T00:00:00Z',
          deletionGracePeriodSeconds: grace,
        },
        spec: { nodeName: NODE, terminationGracePeriodSeconds: 30, containers: [{ name: 'c', image: 'busybox' }] },
      });
    client.emit({ type: 'MODIFIED', object: deleting('6', 3) });
    client.emit({ type: 'MODIFIED', object: deleting('7', 3) });
    expect(seen).toEqual(['ADD u1 grace=30', 'UPDATE u1 grace=3', 'REMOVE u1 grace=3']);
    expect(config.podByUid('u1')).toBeUndefined();
    // The object goes (our final DELETE); a new pod of the name is a new ADD.
    client.emit({ type: 'DELETED', object: deleting('8', 3) });
    client.emit({ type: 'ADDED', object: apiPod('web', 'u2', '9') });
    expect(seen.at(-1)).toBe('ADD u2 grace=undefined');
    await stop();
  });

  it('shares the one pods watch with the mirror pod cache: one LIST, one WATCH, mirrors to the cache, the rest to the set', async () => {
    const mirror = apiPod('etcd-n1', 'm1', '5', {
      metadata: {
        name: 'etcd-n1',
        namespace: 'kube-system',
        uid: 'm1',
        annotations: { 'kubernetes.io/config.mirror': 'abc' },
      },
    });
    const { client, config, told, start, stop, pods } = setup([list('10', [apiPod('web', 'u1', '9'), mirror])]);
    const cache = new MirrorPodCache(pods, NODE);
    start();
    await waitFor(() => client.watching, { timeoutMs: 2000, what: 'the watch' });
    expect(config.hasSeen('api')).toBe(true);
    expect(cache.hasSynced).toBe(true);
    expect(cache.keys()).toEqual(['kube-system/etcd-n1']);
    expect(told).toEqual(['ADD default/web u1']);
    client.emit({ type: 'DELETED', object: mirror });
    client.emit({ type: 'ADDED', object: apiPod('db', 'u2', '11') });
    expect(cache.keys()).toEqual([]);
    expect(told).toEqual(['ADD default/web u1', 'ADD default/db u2']);
    expect(client.calls.map((c) => c.split(' ')[0])).toEqual(['LIST', 'WATCH']);
    await stop();
  });
});
