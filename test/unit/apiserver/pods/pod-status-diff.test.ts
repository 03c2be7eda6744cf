import type { PodStatus } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { podStatusPatch, statusesEqual } from '../../../../src/apiserver/pods/pod-status-diff.js';
import { runningStatus, staticPod } from '../../../e2e/apiserver/fakes.js';
import { strategicMergePatch } from '../../../support/fake-apiserver/patch-strategic.js';

const sp = staticPod('etcd', 'n1');

describe('pod status diff', () => {
  it('a status equal up to key order, sub-second times and server-only fields needs no patch', () => {
    const ours = runningStatus(sp);
    const server: PodStatus = JSON.parse(
      JSON.stringify({
        ...ours,
        startTime: '2026-01-01T00:00:00.123Z',
        conditions: [...ours.conditions!].reverse(),
        nominatedNodeName: 'x',
      }),
    ) as PodStatus;
    server.conditions!.push({ type: 'DisruptionTarget', status: 'True' });
    expect(statusesEqual(server, ours)).toBe(true);
    expect(podStatusPatch(server, ours, 'uid')).toBeUndefined();
  });

  it('a changed restart count gives a patch with the full containerStatuses and the mirror UID', () => {
    const patch = podStatusPatch(runningStatus(sp, 0), runningStatus(sp, 4), 'mirror-uid') as {
      metadata: unknown;
      status: PodStatus;
    };
    expect(patch.metadata).toEqual({ uid: 'mirror-uid' });
    expect(patch.status.containerStatuses).toHaveLength(1);
    expect(patch.status.containerStatuses?.[0].restartCount).toBe(4);
  });

  it("removes fields and kubelet conditions we no longer report, keeps the server's own", () => {
    const server: PodStatus = {
      ...runningStatus(sp),
      message: 'old',
      conditions: [...runningStatus(sp).conditions!, { type: 'DisruptionTarget', status: 'True' }],
    };
    const ours: PodStatus = {
      ...runningStatus(sp),
      conditions: runningStatus(sp).conditions!.filter((c) => c.type !== 'PodReadyToStartContainers'),
    };
    const patch = podStatusPatch(server, ours, 'u') as { status: Record<string, unknown> };
    expect(patch.status.message).toBeNull();
    const conds = patch.status.conditions as { type: string; $patch?: string }[];
    expect(conds).toContainEqual({ type: 'PodReadyToStartContainers', $patch: 'delete' });
    expect(conds.some((c) => c.type === 'DisruptionTarget')).toBe(false);
  });

  it('a Ready that became True loses the reason and message it had: the patch deletes them, and then the two are equal', () => {
    const ours = runningStatus(sp);
    const server: PodStatus = JSON.parse(JSON.stringify(ours)) as PodStatus;
    const ready = server.conditions!.find((c) => c.type === 'Ready')!;
    Object.assign(ready, { reason: 'ContainersNotReady', message: 'containers with unready status: [etcd]' });
    expect(statusesEqual(server, ours)).toBe(false);
    const patch = podStatusPatch(server, ours, 'u') as { status: { conditions: Record<string, unknown>[] } };
    expect(patch.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ reason: null, message: null });
    // What the server stores after that patch (a strategic merge by condition type) equals ours.
    const stored = strategicMergePatch(
      'pods',
      { status: server } as never,
      { status: patch.status } as never,
    ) as unknown as { status: PodStatus };
    expect(stored.status.conditions!.find((c) => c.type === 'Ready')).not.toHaveProperty('reason');
    expect(podStatusPatch(stored.status, ours, 'u')).toBeUndefined();
  });

  it('a pair found equal stays equal without being compared again, and a new object of either side is compared', () => {
    const ours = runningStatus(sp);
    const server: PodStatus = JSON.parse(JSON.stringify(ours)) as PodStatus;
    expect(statusesEqual(server, ours)).toBe(true);
    expect(statusesEqual(server, ours)).toBe(true);
    expect(statusesEqual(server, runningStatus(sp, 3))).toBe(false);
    expect(statusesEqual({ ...server, phase: 'Failed' }, ours)).toBe(false);
  });

  it('against an empty server status (a fresh mirror) sends everything', () => {
    expect(podStatusPatch({ phase: 'Pending', qosClass: 'BestEffort' }, runningStatus(sp), 'u')).toBeDefined();
  });
});
