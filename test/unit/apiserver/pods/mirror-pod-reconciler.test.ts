import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { buildMirrorPod, podKey } from '../../../../src/apiserver/pods/mirror-pod.js';
import { MirrorPodReconciler, RECREATE_AFTER_OUTSIDE_DELETE_MS } from '../../../../src/apiserver/pods/mirror-pods.js';
import { ApiError } from '../../../../src/apiserver/client/api-error.js';
import { memoryLogger } from '../../../../src/log/logger.js';
import type { StaticPod } from '../../../../src/config/types.js';
import { nullLogger } from '../../../../src/log/logger.js';
import { staticPod } from '../../../e2e/apiserver/fakes.js';

/** The API server and the mirror-pod cache as the reconciler sees them: one map of pods, and what was asked of it. */
class FakeMirrors {
  readonly pods = new Map<string, Pod>();
  readonly calls: string[] = [];
  hasSynced = true;
  private next = 1;

  get(key: string): Pod | undefined {
    return this.pods.get(key);
  }
  observe(pod: Pod): void {
    this.pods.set(podKey(pod.metadata!.namespace!, pod.metadata!.name!), pod);
  }
  forget(key: string): void {
    this.pods.delete(key);
  }
  seed(sp: StaticPod, extra: Partial<NonNullable<Pod['metadata']>> = {}): Pod {
    const m = buildMirrorPod(sp, 'n1', 'node-uid');
    m.metadata = { ...m.metadata, uid: `mirror-${this.next++}`, ...extra };
    this.observe(m);
    return m;
  }

  readonly client = {
    create: async <T>(path: string, body: T): Promise<T> => {
      this.calls.push(`POST ${path}`);
      const pod = structuredClone(body) as Pod;
      pod.metadata = { ...pod.metadata, uid: `mirror-${this.next++}` };
      return pod as T;
    },
    get: async <T>(path: string): Promise<T> => {
      this.calls.push(`GET ${path}`);
      throw new Error(`unexpected GET ${path}`);
    },
    delete: async <T>(path: string): Promise<T> => {
      this.calls.push(`DELETE ${path}`);
      return {} as T;
    },
  };
}

function setup(pods: StaticPod[]) {
  const api = new FakeMirrors();
  let now = 1_000_000;
  const desired = new Map(pods.map((p) => [p.key, p]));
  const reconciler = new MirrorPodReconciler(
    api.client,
    api,
    'n1',
    () => 'node-uid',
    (k) => desired.get(k),
    () => true,
    nullLogger,
    () => now,
  );
  return { api, reconciler, desired, advance: (ms: number) => (now += ms) };
}

describe('MirrorPodReconciler', () => {
  const etcd = staticPod('etcd', 'n1');

  it('creates a mirror that does not exist yet at once, with no pause', async () => {
    const { api, reconciler } = setup([etcd]);
    const r = await reconciler.reconcile(etcd.key);
    expect(r.retryAfterMs).toBeUndefined();
    expect(r.mirror?.metadata?.annotations?.['kubernetes.io/config.mirror']).toBe(etcd.uid);
    expect(api.calls).toEqual(['POST /api/v1/namespaces/kube-system/pods']);
  });

  it('replaces a mirror with another hash at once: delete, then create in the same pass', async () => {
    const { api, reconciler } = setup([etcd]);
    api.seed(staticPod('etcd', 'n1', { image: 'registry.k8s.io/etcd:old' }));
    const r = await reconciler.reconcile(etcd.key);
    expect(r.retryAfterMs).toBeUndefined();
    expect(r.mirror).toBeDefined();
    expect(api.calls).toEqual([
      'DELETE /api/v1/namespaces/kube-system/pods/etcd-n1',
      'POST /api/v1/namespaces/kube-system/pods',
    ]);
  });

  it('recreates a mirror someone else was deleting only after the pause, without waiting inside the pass', async () => {
    const { api, reconciler, advance } = setup([etcd]);
    api.seed(etcd, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    const first = await reconciler.reconcile(etcd.key);
    expect(api.calls).toEqual(['DELETE /api/v1/namespaces/kube-system/pods/etcd-n1']);
    expect(first).toEqual({ retryAfterMs: RECREATE_AFTER_OUTSIDE_DELETE_MS });

    // Woken early (the DELETED event, a status change): still no create, told how long is left.
    advance(400);
    const early = await reconciler.reconcile(etcd.key);
    expect(early).toEqual({ retryAfterMs: RECREATE_AFTER_OUTSIDE_DELETE_MS - 400 });
    expect(api.calls).toHaveLength(1);

    advance(RECREATE_AFTER_OUTSIDE_DELETE_MS - 400);
    const later = await reconciler.reconcile(etcd.key);
    expect(later.retryAfterMs).toBeUndefined();
    expect(later.mirror).toBeDefined();
    expect(api.calls).toEqual([
      'DELETE /api/v1/namespaces/kube-system/pods/etcd-n1',
      'POST /api/v1/namespaces/kube-system/pods',
    ]);

    // Once recreated, the pause is spent: the next replacement (a hash change) is immediate.
    api.forget(etcd.key);
    const again = await reconciler.reconcile(etcd.key);
    expect(again.retryAfterMs).toBeUndefined();
  });

  it('pauses only the pod whose mirror was deleted; the others are created in the meantime', async () => {
    const sched = staticPod('kube-scheduler', 'n1');
    const { api, reconciler } = setup([etcd, sched]);
    api.seed(etcd, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    expect((await reconciler.reconcile(etcd.key)).retryAfterMs).toBe(RECREATE_AFTER_OUTSIDE_DELETE_MS);
    const other = await reconciler.reconcile(sched.key);
    expect(other.retryAfterMs).toBeUndefined();
    expect(other.mirror?.metadata?.name).toBe('kube-scheduler-n1');
  });

  it('deletes an orphan being deleted without any pause or create', async () => {
    const { api, reconciler, desired } = setup([etcd]);
    api.seed(etcd, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    desired.clear();
    expect(await reconciler.reconcile(etcd.key)).toEqual({});
    expect(api.calls).toEqual(['DELETE /api/v1/namespaces/kube-system/pods/etcd-n1']);
  });

  it("an API pod holding the name: never deleted or replaced, said once (a warning naming both, a Warning event on the API pod), the create failing as the kubelet's", async () => {
    const api = new FakeMirrors();
    const { logger, lines } = memoryLogger();
    const events: string[] = [];
    const holder: Pod = {
      metadata: { name: etcd.pod.metadata.name, namespace: etcd.pod.metadata.namespace, uid: 'api-pod-uid' },
      spec: { nodeName: 'n1', containers: [] },
    };
    api.client.create = async () => {
      throw new ApiError(409, 'AlreadyExists', 'pods "etcd-n1" already exists');
    };
    api.client.get = async <T>() => structuredClone(holder) as T;
    const reconciler = new MirrorPodReconciler(
      api.client,
      api,
      'n1',
      () => 'node-uid',
      (k) => (k === etcd.key ? etcd : undefined),
      () => true,
      logger,
      Date.now,
      {
        event: (o, type, reason, message) => void events.push(`${o.uid} ${type} ${reason} ${message}`),
      },
    );
    for (let i = 0; i < 3; i++)
      await expect(reconciler.reconcile(etcd.key)).rejects.toThrow(
        `pod ${etcd.key} is an API pod (uid api-pod-uid), not a mirror pod`,
      );
    expect(lines.filter((l) => l.includes('an API pod has its name'))).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(events[0]).toContain(
      `api-pod-uid Warning FailedCreate Mirror pod of static pod ${etcd.file} (uid ${etcd.uid}) not created`,
    );
    expect(api.calls.filter((c) => c.startsWith('DELETE'))).toEqual([]);
  });
});
