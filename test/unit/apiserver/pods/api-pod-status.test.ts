// API pod statuses go to the pod's own status subresource with the UID precondition; a terminal
// phase is never taken back; a pod gone or recreated under the name is not retried.
import type { PodStatus } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../../src/apiserver/client/api-error.js';
import { ApiPodStatusSync } from '../../../../src/apiserver/pods/api-pod-status.js';
import type { StaticPod } from '../../../../src/config/types.js';

const sp: StaticPod = {
  uid: '0b9c1a7e-1111-4c4c-9d9d-000000000001',
  key: 'kube-system/kube-proxy-abcde',
  file: 'api:/api/v1/namespaces/kube-system/pods/kube-proxy-abcde',
  pod: {
    metadata: {
      name: 'kube-proxy-abcde',
      namespace: 'kube-system',
      uid: '0b9c1a7e-1111-4c4c-9d9d-000000000001',
      annotations: {},
    },
    spec: { containers: [] },
    status: { phase: 'Pending' },
  },
};

function setup(
  statuses: Map<string, PodStatus>,
  answer: (body: Record<string, unknown>) => unknown = (b) => ({ status: b.status }),
) {
  const patches: { path: string; body: Record<string, unknown> }[] = [];
  const client = {
    patch: async <T>(path: string, _type: string, body: unknown): Promise<T> => {
      patches.push({ path, body: body as Record<string, unknown> });
      const r = answer(body as Record<string, unknown>);
      if (r instanceof Error) throw r;
      return r as T;
    },
  };
  const sync = new ApiPodStatusSync(
    client,
    { get: (u) => statuses.get(u), onChange: () => {} },
    { apiPodByUid: (u) => (u === sp.uid ? sp : undefined), apiPods: () => [sp], onRemoved: () => {} },
  );
  return { sync, patches };
}

describe('ApiPodStatusSync', () => {
  it('patches the pod itself, with metadata.uid, and only when the status changed', async () => {
    const statuses = new Map<string, PodStatus>([
      [sp.uid, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }],
    ]);
    const { sync, patches } = setup(statuses);
    await sync.sync(sp.uid);
    await sync.sync(sp.uid);
    expect(patches).toHaveLength(1);
    expect(patches[0]!.path).toBe('/api/v1/namespaces/kube-system/pods/kube-proxy-abcde/status');
    expect(patches[0]!.body.metadata).toEqual({ uid: sp.uid });
    expect((patches[0]!.body.status as PodStatus).phase).toBe('Running');
    await sync.sync('not-an-api-pod');
    expect(patches).toHaveLength(1);
  });

  it('never takes a terminal phase back', async () => {
    const statuses = new Map<string, PodStatus>([[sp.uid, { phase: 'Failed', reason: 'X' }]]);
    const { sync, patches } = setup(statuses);
    await sync.sync(sp.uid);
    statuses.set(sp.uid, { phase: 'Running' });
    await sync.sync(sp.uid);
    expect(patches.map((p) => (p.body.status as PodStatus).phase)).toEqual(['Failed']);
  });

  it('does not retry a pod that is gone or whose UID no longer matches', async () => {
    const statuses = new Map<string, PodStatus>([[sp.uid, { phase: 'Running' }]]);
    for (const err of [
      new ApiError(404, 'NotFound', 'gone'),
      new ApiError(409, 'Conflict', 'Precondition failed: UID in precondition'),
    ]) {
      const { sync, patches } = setup(statuses, () => err);
      await expect(sync.sync(sp.uid)).resolves.toBeUndefined();
      expect(patches).toHaveLength(1);
    }
    const { sync } = setup(statuses, () => new ApiError(503, 'ServiceUnavailable', 'away'));
    await expect(sync.sync(sp.uid)).rejects.toThrow('away');
  });
});
