import type { ConfigMap, Service } from 'kubernetes-types/core/v1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiPodObjects } from '../../../../src/apiserver/pod-objects/api-pod-objects.js';
import { DeferredPodObjects } from '../../../../src/apiserver/pod-objects/deferred-pod-objects.js';
import { nullLogger } from '../../../../src/log/logger.js';
import { PodObjectUnavailableError, type PodRef } from '../../../../src/node/pod-objects.js';
import { FakeGate } from '../client/gate.js';
import { FakeObjectServer } from './fake-object-server.js';

const SERVICES = '/api/v1/services';
const svc = (namespace: string, name: string): Service => ({
  metadata: { namespace, name },
  spec: { clusterIP: '10.0.0.1' },
});
const POD: PodRef = {
  metadata: { uid: 'u', name: 'p', namespace: 'kube-system' },
  spec: { containers: [{ name: 'c' }], volumes: [{ name: 'v', configMap: { name: 'cm' } }] },
};

describe('Services lister', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("one cluster-wide watch, from the first registered pod; a namespace reads its Services and default's", async () => {
    const gate = new FakeGate();
    const server = new FakeObjectServer();
    for (const [ns, name] of [
      ['default', 'kubernetes'],
      ['kube-system', 'kube-dns'],
      ['other', 'web'],
    ] as const)
      server.put(SERVICES, svc(ns, name));
    const objects = new ApiPodObjects({ client: server.client, gate, logger: nullLogger });
    await expect(objects.getServices('kube-system')).rejects.toThrow(PodObjectUnavailableError);
    expect(server.count('list', SERVICES)).toBe(0);
    objects.registerPod(POD);
    objects.registerPod({ ...POD, metadata: { ...POD.metadata, uid: 'u2' } });
    const names = (await objects.getServices('kube-system'))
      .map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`)
      .sort();
    expect(names).toEqual(['default/kubernetes', 'kube-system/kube-dns']);
    expect(server.count('list', SERVICES)).toBe(1);
    expect(server.calls.find((c) => c.path === SERVICES)?.query).toEqual({});
    expect(server.openWatches(SERVICES)).toBe(1);
    server.put(SERVICES, svc('kube-system', 'metrics'));
    expect(await objects.getServices('kube-system')).toHaveLength(3);
    await objects.stop();
  });
});

describe('DeferredPodObjects', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('says "not yet" before a connection, then hands the registered pods to the connection\'s objects and their changes to its listeners', async () => {
    const deferred = new DeferredPodObjects();
    const changes: string[][] = [];
    deferred.onChange((u) => changes.push([...u]));
    deferred.registerPod(POD);
    deferred.registerPod({ ...POD, metadata: { ...POD.metadata, uid: 'gone' } });
    deferred.unregisterPod('gone');
    await expect(deferred.getConfigMap('kube-system', 'cm')).rejects.toThrow(/no connection to the API server yet/);

    const gate = new FakeGate();
    const server = new FakeObjectServer();
    server.put('/api/v1/namespaces/kube-system/configmaps', {
      metadata: { name: 'cm', namespace: 'kube-system' },
      data: { a: 'b' },
    } as ConfigMap);
    const objects = new ApiPodObjects({ client: server.client, gate, logger: nullLogger });
    deferred.attach(objects);
    expect((await deferred.getConfigMap('kube-system', 'cm'))?.data).toEqual({ a: 'b' });
    server.put('/api/v1/namespaces/kube-system/configmaps', {
      metadata: { name: 'cm', namespace: 'kube-system' },
      data: { a: 'c' },
    } as ConfigMap);
    expect(changes).toEqual([['u']]);
    deferred.unregisterPod('u');
    await vi.advanceTimersByTimeAsync(0);
    expect(server.openWatches()).toBe(1); // the Services watch stays, as the kubelet's lister does
    await objects.stop();
  });
});
