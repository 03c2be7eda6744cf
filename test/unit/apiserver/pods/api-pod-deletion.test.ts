// The final DELETE of an API pod: only for a pod someone began deleting, only once its worker has
// removed everything, grace 0 with the UID precondition; a pod already gone is not retried.
import type { DeleteOptions } from 'kubernetes-types/meta/v1';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../../src/apiserver/client/api-error.js';
import { ApiPodFinalDelete } from '../../../../src/apiserver/pods/api-pod-deletion.js';
import type { StaticPod } from '../../../../src/config/types.js';

const pod = (uid: string, deleting: boolean): StaticPod => ({
  uid,
  key: 'kube-system/web',
  file: 'api:/api/v1/namespaces/kube-system/pods/web',
  pod: {
    metadata: {
      name: 'web',
      namespace: 'kube-system',
      uid,
      annotations: {},
      ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { containers: [] },
  },
});

function setup(fail?: Error) {
  const calls: { path: string; options?: DeleteOptions }[] = [];
  const d = new ApiPodFinalDelete({
    delete: async <T>(path: string, options?: DeleteOptions): Promise<T> => {
      calls.push({ path, options });
      if (fail) throw fail;
      return {} as T;
    },
  });
  return { d, calls };
}

describe('ApiPodFinalDelete', () => {
  it('deletes with grace 0 and the UID precondition once the worker is done, and only pods being deleted', async () => {
    const { d, calls } = setup();
    d.deletionStarted(pod('u1', true));
    d.deletionStarted(pod('u2', false));
    await d.send('u1');
    expect(calls).toEqual([]); // the worker is not done yet
    expect(d.podRemoved('u2')).toBe(false);
    expect(d.podRemoved('u1')).toBe(true);
    await d.send('u1');
    await d.send('u1');
    expect(calls).toEqual([
      {
        path: '/api/v1/namespaces/kube-system/pods/web',
        options: { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } },
      },
    ]);
  });

  it('forgets a pod already gone; retries one the server did not answer', async () => {
    const gone = setup(new ApiError(404, 'NotFound', 'gone'));
    gone.d.deletionStarted(pod('u1', true));
    gone.d.podRemoved('u1');
    await gone.d.send('u1');
    await gone.d.send('u1');
    expect(gone.calls).toHaveLength(1);
    const away = setup(new ApiError(503, 'ServiceUnavailable', 'away'));
    away.d.deletionStarted(pod('u1', true));
    away.d.podRemoved('u1');
    await expect(away.d.send('u1')).rejects.toThrow('away');
    await expect(away.d.send('u1')).rejects.toThrow('away');
    expect(away.calls).toHaveLength(2);
  });
});
