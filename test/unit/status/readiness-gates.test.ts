// Readiness gates (spec.readinessGates) as the kubelet's GeneratePodReadyCondition judges them: Ready
// is True only when the containers are ready and each gate's condition, as others set it on the
// pod through the API, is True; the kubelet keeps such conditions and never sends its own copy of
// them back over the server's.
import { describe, expect, it } from 'vitest';
import type { PodCondition, PodStatus } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../../../src/config/types.js';
import { sameApiPod } from '../../../src/config/api/api-pods.js';
import { podStatusPatch } from '../../../src/apiserver/pods/pod-status-diff.js';
import { generatePodStatus } from '../../../src/status/generate-pod-status.js';
import { ctr, input, runtimePod, sandbox, staticPod, UID } from './fixtures.js';

const GATES = [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }];

function gated(conditions: PodCondition[]): StaticPod['pod'] {
  const p = staticPod({ readinessGates: GATES });
  return { ...p, status: { phase: 'Running', conditions } };
}

function statusOf(pod: StaticPod['pod']): PodStatus {
  return generatePodStatus(input({ pod, runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) }));
}

const byType = (s: PodStatus, type: string) => s.conditions?.find((c) => c.type === type);

describe('readiness gates', () => {
  it('a gate without its condition keeps the pod not Ready, in the kubelet’s words, while ContainersReady is True', () => {
    const s = statusOf(gated([{ type: 'example.com/lb', status: 'True' }]));
    expect(byType(s, 'ContainersReady')?.status).toBe('True');
    expect(byType(s, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ReadinessGatesNotReady',
      message: 'corresponding condition of pod readiness gate "example.com/dns" does not exist.',
    });
  });

  it('a gate whose condition is False says so', () => {
    const s = statusOf(
      gated([
        { type: 'example.com/lb', status: 'False' },
        { type: 'example.com/dns', status: 'True' },
      ]),
    );
    expect(byType(s, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ReadinessGatesNotReady',
      message: 'the status of pod readiness gate "example.com/lb" is not "True", but False',
    });
  });

  it('every gate True and the containers ready: Ready, with the gates’ conditions kept as they were set', () => {
    const set: PodCondition[] = [
      { type: 'example.com/lb', status: 'True', lastTransitionTime: '2025-01-01T09:00:00Z' },
      { type: 'example.com/dns', status: 'True', lastTransitionTime: '2025-01-01T09:30:00Z' },
    ];
    const s = statusOf(gated(set));
    expect(byType(s, 'Ready')?.status).toBe('True');
    expect(byType(s, 'example.com/lb')).toEqual(set[0]);
    expect(byType(s, 'example.com/dns')).toEqual(set[1]);
  });

  it('the patch carries the kubelet’s conditions only: a stale copy of a gate’s condition never overwrites the server’s', () => {
    const ours = statusOf(gated([{ type: 'example.com/lb', status: 'True' }]));
    const server: PodStatus = {
      ...ours,
      conditions: [
        ...(ours.conditions ?? []).filter((c) => c.type !== 'example.com/lb'),
        { type: 'example.com/lb', status: 'False' },
      ],
    };
    // Only the gate's condition differs, and it is not ours to send.
    expect(podStatusPatch(server, ours, UID)).toBeUndefined();
    const patch = podStatusPatch({ phase: 'Pending' }, ours, UID) as { status: { conditions: PodCondition[] } };
    expect(patch.status.conditions.map((c) => c.type)).not.toContain('example.com/lb');
  });

  it('a change of a gate’s condition through the API is a change of the API pod (the kubelet’s RECONCILE); other status changes are not', () => {
    const sp = (conditions: PodCondition[], readinessGates = GATES): StaticPod => {
      const pod = staticPod({ readinessGates });
      return {
        pod: { ...pod, status: { phase: 'Running', conditions } },
        uid: UID,
        key: 'default/web-node1',
        file: 'api:/api/v1/namespaces/default/pods/web-node1',
        uidPinned: true,
      };
    };
    const before = sp([{ type: 'example.com/lb', status: 'False' }]);
    expect(sameApiPod(before, sp([{ type: 'example.com/lb', status: 'True' }]))).toBe(false);
    expect(
      sameApiPod(
        before,
        sp([
          { type: 'example.com/lb', status: 'False' },
          { type: 'Ready', status: 'True' },
        ]),
      ),
    ).toBe(true);
    expect(
      sameApiPod(
        sp([{ type: 'example.com/lb', status: 'False' }], []),
        sp([{ type: 'example.com/lb', status: 'True' }], []),
      ),
    ).toBe(true);
  });
});
