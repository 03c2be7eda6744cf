import type { ConfigMap, PodSpec } from 'kubernetes-types/core/v1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiPodObjects } from '../../../../src/apiserver/pod-objects/api-pod-objects.js';
import { memoryLogger, nullLogger } from '../../../../src/log/logger.js';
import { ApiError } from '../../../../src/apiserver/client/api-error.js';
import { PodObjectUnavailableError, type PodRef } from '../../../../src/node/pod-objects.js';
import { FakeGate } from '../client/gate.js';
import { FakeObjectServer } from './fake-object-server.js';

const CM = '/api/v1/namespaces/kube-system/configmaps';
const SECRETS = '/api/v1/namespaces/kube-system/secrets';

function pod(uid: string, spec: PodSpec, namespace = 'kube-system'): PodRef {
  return { metadata: { uid, name: `pod-${uid}`, namespace }, spec };
}
const usesConfigMap = (name: string): PodSpec => ({
  containers: [{ name: 'c' }],
  volumes: [{ name: 'v', configMap: { name } }],
});

function setup() {
  const gate = new FakeGate();
  const server = new FakeObjectServer();
  const objects = new ApiPodObjects({
    client: server.client,
    gate,
    logger: nullLogger,
    watchSeconds: () => 300,
    random: () => 0,
  });
  const changes: string[][] = [];
  objects.onChange((uids) => changes.push([...uids].sort()));
  return { gate, server, objects, changes };
}

describe('ConfigMap and Secret managers (watch-based)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs one LIST+WATCH per referenced object however many pods refer to it, and stops it when the last one is unregistered', async () => {
    const { server, objects } = setup();
    server.put(CM, { metadata: { name: 'kube-proxy', namespace: 'kube-system' }, data: { a: '1' } } as ConfigMap);
    objects.registerPod(pod('p1', usesConfigMap('kube-proxy')));
    objects.registerPod(pod('p2', usesConfigMap('kube-proxy')));
    await vi.advanceTimersByTimeAsync(0);
    expect(server.count('list', CM)).toBe(1);
    expect(server.calls.find((c) => c.verb === 'list')?.query).toEqual({ fieldSelector: 'metadata.name=kube-proxy' });
    const watch = server.calls.find((c) => c.verb === 'watch' && c.path === CM);
    expect(watch?.query).toMatchObject({
      fieldSelector: 'metadata.name=kube-proxy',
      resourceVersion: '101',
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
    });
    expect(server.openWatches(CM, 'kube-proxy')).toBe(1);
    expect((await objects.getConfigMap('kube-system', 'kube-proxy'))?.data).toEqual({ a: '1' });

    objects.unregisterPod('p1');
    await vi.advanceTimersByTimeAsync(0);
    expect(server.openWatches(CM)).toBe(1);
    objects.unregisterPod('p2');
    await vi.advanceTimersByTimeAsync(0);
    expect(server.openWatches(CM)).toBe(0);
    expect(objects.configMaps.watchCount).toBe(0);
    // No pod refers to it any more: a read waits (bounded) for one, then says so.
    const read = objects.getConfigMap('kube-system', 'kube-proxy');
    const failed = expect(read).rejects.toThrow(PodObjectUnavailableError);
    await vi.advanceTimersByTimeAsync(3000);
    await failed;
    await objects.stop();
  });

  it('tells a change with the UIDs of every registered pod that refers to the object, and only those', async () => {
    const { server, objects, changes } = setup();
    server.put(CM, { metadata: { name: 'shared', namespace: 'kube-system' }, data: { v: '1' } } as ConfigMap);
    server.put(CM, { metadata: { name: 'other', namespace: 'kube-system' }, data: { v: '1' } } as ConfigMap);
    objects.registerPod(pod('a', usesConfigMap('shared')));
    objects.registerPod(
      pod('b', {
        containers: [{ name: 'c', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'shared', key: 'v' } } }] }],
      }),
    );
    objects.registerPod(pod('c', usesConfigMap('other')));
    await vi.advanceTimersByTimeAsync(0);
    expect(changes).toEqual([]);

    server.put(CM, { metadata: { name: 'shared', namespace: 'kube-system' }, data: { v: '2' } } as ConfigMap);
    expect(changes).toEqual([['a', 'b']]);
    expect((await objects.getConfigMap('kube-system', 'shared'))?.data).toEqual({ v: '2' });
    // A bookmark moves the resourceVersion and changes nothing.
    server.bookmark(CM);
    expect(changes).toHaveLength(1);
    server.remove(CM, 'shared');
    expect(changes).toEqual([
      ['a', 'b'],
      ['a', 'b'],
    ]);
    expect(await objects.getConfigMap('kube-system', 'shared')).toBeUndefined();
    await objects.stop();
  });

  it('answers undefined for an object the server does not have, and tells the pods when it appears', async () => {
    const { server, objects, changes } = setup();
    objects.registerPod(
      pod('p', { containers: [{ name: 'c' }], volumes: [{ name: 's', secret: { secretName: 'later' } }] }),
    );
    expect(await objects.getSecret('kube-system', 'later')).toBeUndefined();
    server.put(SECRETS, { metadata: { name: 'later', namespace: 'kube-system' }, data: { k: 'dg==' } });
    expect(changes).toEqual([['p']]);
    expect((await objects.getSecret('kube-system', 'later'))?.data).toEqual({ k: 'dg==' });
    await objects.stop();
  });

  it('after a 410 lists again (no LIST before), and a change the watch missed is told', async () => {
    const { server, objects, changes } = setup();
    server.put(CM, { metadata: { name: 'cm', namespace: 'kube-system' }, data: { v: '1' } } as ConfigMap);
    objects.registerPod(pod('p', usesConfigMap('cm')));
    await vi.advanceTimersByTimeAsync(0);
    // A routine end of a watch: watched again from its resourceVersion, no LIST.
    server.endWatches();
    await vi.advanceTimersByTimeAsync(1500);
    expect(server.count('list', CM)).toBe(1);
    expect(server.count('watch', CM)).toBe(2);
    expect(server.calls.filter((c) => c.verb === 'watch').at(-1)?.query?.resourceVersion).toBe('101');

    server.putQuietly(CM, { metadata: { name: 'cm', namespace: 'kube-system' }, data: { v: 'missed' } } as ConfigMap);
    server.expireWatches();
    await vi.advanceTimersByTimeAsync(3000);
    expect(server.count('list', CM)).toBe(2);
    expect(server.openWatches(CM)).toBe(1);
    expect(changes).toEqual([['p']]);
    expect((await objects.getConfigMap('kube-system', 'cm'))?.data).toEqual({ v: 'missed' });
    await objects.stop();
  });

  it('a read waits for the first LIST, bounded; while the server is away it fails at once', async () => {
    const { server, objects, gate } = setup();
    gate.down();
    objects.registerPod(pod('p', usesConfigMap('cm')));
    await expect(objects.getConfigMap('kube-system', 'cm')).rejects.toThrow(
      /ConfigMap kube-system\/cm cannot be read yet: the API server is not reachable/,
    );
    expect(server.count('list')).toBe(0);
    gate.up();
    await vi.advanceTimersByTimeAsync(0);
    expect(server.count('list', CM)).toBe(1);
    expect(await objects.getConfigMap('kube-system', 'cm')).toBeUndefined();
    // Once listed, the last known object stays readable while the server is away.
    gate.down();
    expect(await objects.getConfigMap('kube-system', 'cm')).toBeUndefined();
    await objects.stop();
  });

  it('a failed read is followed by a change once the first LIST comes in, so the pod need not wait out its back-off', async () => {
    const { server, objects, changes } = setup();
    server.listFailure = new Error('refused for now');
    server.put(CM, { metadata: { name: 'cm', namespace: 'kube-system' } } as ConfigMap);
    objects.registerPod(pod('p', usesConfigMap('cm')));
    const read = objects.getConfigMap('kube-system', 'cm');
    const failed = expect(read).rejects.toThrow(/cannot be read yet: refused for now/);
    await vi.advanceTimersByTimeAsync(3000);
    await failed;
    server.listFailure = undefined;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(changes).toEqual([['p']]);
    await objects.stop();
  });

  it('a read that comes just before its pod is registered waits for the registration', async () => {
    const { server, objects } = setup();
    server.put(CM, { metadata: { name: 'cm', namespace: 'kube-system' }, data: { v: '1' } } as ConfigMap);
    const read = objects.getConfigMap('kube-system', 'cm');
    objects.registerPod(pod('p', usesConfigMap('cm')));
    expect((await read)?.data).toEqual({ v: '1' });
    await objects.stop();
  });

  it('a pod registered again with other references keeps a shared watch running, starts the new one and stops the old', async () => {
    const { server, objects } = setup();
    objects.registerPod(
      pod('p', {
        containers: [{ name: 'c' }],
        volumes: [
          { name: 'a', configMap: { name: 'keep' } },
          { name: 'b', configMap: { name: 'old' } },
        ],
      }),
    );
    await vi.advanceTimersByTimeAsync(0);
    objects.registerPod(
      pod('p', {
        containers: [{ name: 'c' }],
        volumes: [
          { name: 'a', configMap: { name: 'keep' } },
          { name: 'b', configMap: { name: 'new' } },
        ],
      }),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(server.openWatches(CM, 'keep')).toBe(1);
    expect(server.openWatches(CM, 'old')).toBe(0);
    expect(server.openWatches(CM, 'new')).toBe(1);
    expect(
      server.calls.filter((c) => c.verb === 'list' && c.query?.fieldSelector === 'metadata.name=keep'),
    ).toHaveLength(1);
    await objects.stop();
  });

  it('stops watching an immutable object once it is seen, and still answers it', async () => {
    const { server, objects } = setup();
    server.put(CM, {
      metadata: { name: 'frozen', namespace: 'kube-system' },
      immutable: true,
      data: { v: '1' },
    } as ConfigMap);
    objects.registerPod(pod('p', usesConfigMap('frozen')));
    await vi.advanceTimersByTimeAsync(0);
    expect(server.openWatches(CM)).toBe(0);
    expect((await objects.getConfigMap('kube-system', 'frozen'))?.data).toEqual({ v: '1' });
    await objects.stop();
  });

  const usesConfigMapInEnv = (name: string): PodSpec => ({
    containers: [{ name: 'c', env: [{ name: 'MODE', valueFrom: { configMapKeyRef: { name, key: 'mode' } } }] }],
  });

  it('stops the watch of an object only env refers to once no one read it for 5 min, and lists it anew at the next read', async () => {
    const { server, objects } = setup();
    server.put(CM, { metadata: { name: 'env-only', namespace: 'kube-system' }, data: { mode: 'a' } } as ConfigMap);
    objects.registerPod(pod('p', usesConfigMapInEnv('env-only')));
    await vi.advanceTimersByTimeAsync(0);
    expect((await objects.getConfigMap('kube-system', 'env-only'))?.data).toEqual({ mode: 'a' });
    await vi.advanceTimersByTimeAsync(4 * 60_000);
    expect(server.openWatches(CM, 'env-only')).toBe(1);
    // The kubelet's recycler looks every minute: idle for more than 5 min is stopped at the sixth.
    await vi.advanceTimersByTimeAsync(2 * 60_000);
    expect(server.openWatches(CM, 'env-only')).toBe(0);
    expect(objects.configMaps.watchCount).toBe(0);
    server.put(CM, { metadata: { name: 'env-only', namespace: 'kube-system' }, data: { mode: 'b' } } as ConfigMap);
    expect((await objects.getConfigMap('kube-system', 'env-only'))?.data).toEqual({ mode: 'b' });
    expect(server.count('list', CM)).toBe(2);
    expect(server.openWatches(CM, 'env-only')).toBe(1);
    await objects.stop();
  });

  it('keeps the watch of an object a registered pod mounts however long no one reads it (its volume follows changes)', async () => {
    const { server, objects, changes } = setup();
    server.put(CM, { metadata: { name: 'mounted', namespace: 'kube-system' }, data: { a: '1' } } as ConfigMap);
    objects.registerPod(pod('p', usesConfigMap('mounted')));
    await vi.advanceTimersByTimeAsync(0);
    await objects.getConfigMap('kube-system', 'mounted');
    await vi.advanceTimersByTimeAsync(20 * 60_000);
    expect(server.openWatches(CM, 'mounted')).toBe(1);
    server.put(CM, { metadata: { name: 'mounted', namespace: 'kube-system' }, data: { a: '2' } } as ConfigMap);
    await vi.advanceTimersByTimeAsync(0);
    expect(changes).toContainEqual(['p']);
    expect(server.count('list', CM)).toBe(1);
    await objects.stop();
  });

  it('back after an outage, an open watch is opened again from its resourceVersion without a LIST', async () => {
    const { server, objects, gate } = setup();
    objects.registerPod(pod('p', usesConfigMap('cm')));
    await vi.advanceTimersByTimeAsync(0);
    gate.down();
    gate.up();
    await vi.advanceTimersByTimeAsync(1000);
    expect(server.count('list', CM)).toBe(1);
    expect(server.count('watch', CM)).toBe(2);
    expect(server.openWatches(CM)).toBe(1);
    await objects.stop();
  });

  it("a refusal (the Node authorizer's 403) is warned of once, retried with back-off, and the pod can read once it is allowed", async () => {
    const { logger, lines } = memoryLogger(0);
    const gate = new FakeGate();
    const server = new FakeObjectServer();
    const objects = new ApiPodObjects({ client: server.client, gate, logger });
    server.listFailure = new ApiError(
      403,
      'Forbidden',
      'configmaps "cm" is forbidden: no relationship found between node and this object',
    );
    objects.registerPod(pod('p', usesConfigMap('cm')));
    await vi.advanceTimersByTimeAsync(20_000);
    const lists = server.count('list', CM);
    expect(lists).toBeGreaterThan(2);
    expect(lists).toBeLessThan(8);
    // One line for the ConfigMap (and one for the Services list, refused the same way here).
    const warnings = lines.filter(
      (l) => l.includes('refuses to list or watch') && l.includes('ConfigMap kube-system/cm'),
    );
    expect(warnings).toHaveLength(1);
    server.listFailure = undefined;
    await vi.advanceTimersByTimeAsync(40_000);
    expect(await objects.getConfigMap('kube-system', 'cm')).toBeUndefined();
    await objects.stop();
  });
});
