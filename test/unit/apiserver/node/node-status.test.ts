import { describe, expect, it } from 'vitest';
import { buildNode, computeNodeStatus, nodeStatusChanged } from '../../../../src/apiserver/node/node-status.js';
import { fakeNodeInfo } from '../../../e2e/apiserver/fakes.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:00:10Z');

describe('node status', () => {
  it('reports the kubelet conditions, reasons and messages', () => {
    const s = computeNodeStatus(fakeNodeInfo('n1'), undefined, t0);
    expect(s.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
    expect(s.conditions?.find((c) => c.type === 'Ready')?.message).toBe('kubelet is posting ready status');
    expect(s.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.7' },
      { type: 'Hostname', address: 'n1' },
    ]);
  });

  it("reports the runtime's handlers with both features, as the kubelet's RuntimeHandlers setter; none: omitted", () => {
    const handlers = [
      { name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
      { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: false } },
    ];
    const s = computeNodeStatus({ ...fakeNodeInfo('n1'), runtimeHandlers: () => handlers }, undefined, t0);
    expect(s.runtimeHandlers).toEqual(handlers);
    expect(computeNodeStatus(fakeNodeInfo('n1'), undefined, t0)).not.toHaveProperty('runtimeHandlers');
    // The features changing (a runtime upgraded) is a change worth a post.
    const later = computeNodeStatus(
      {
        ...fakeNodeInfo('n1'),
        runtimeHandlers: () => handlers.map((h) => ({ ...h, features: { ...h.features, userNamespaces: true } })),
      },
      s,
      t1,
    );
    expect(nodeStatusChanged(s, later)).toBe(true);
  });

  it("reports the runtime's features as status.features (the kubelet's RuntimeFeatures setter); none reported: omitted", () => {
    const s = computeNodeStatus(
      { ...fakeNodeInfo('n1'), runtimeFeatures: () => ({ supplementalGroupsPolicy: true }) },
      undefined,
      t0,
    );
    expect(s.features).toEqual({ supplementalGroupsPolicy: true });
    const none = computeNodeStatus({ ...fakeNodeInfo('n1'), runtimeFeatures: () => undefined }, undefined, t0);
    expect(none).not.toHaveProperty('features');
    const without = computeNodeStatus(
      { ...fakeNodeInfo('n1'), runtimeFeatures: () => ({ supplementalGroupsPolicy: false }) },
      s,
      t1,
    );
    expect(nodeStatusChanged(s, without)).toBe(true);
  });

  it('reports status.declaredFeatures as the node gives them (KEP-5328); none: omitted', () => {
    const features = ['ExtendWebSocketsToKubelet', 'RestartAllContainersOnContainerExits'];
    const s = computeNodeStatus({ ...fakeNodeInfo('n1'), declaredFeatures: () => features }, undefined, t0);
    expect(s.declaredFeatures).toEqual(features);
    const none = computeNodeStatus({ ...fakeNodeInfo('n1'), declaredFeatures: () => [] }, undefined, t0);
    expect(none).not.toHaveProperty('declaredFeatures');
    expect(nodeStatusChanged(none, s)).toBe(true);
  });

  it('only heartbeat times move when nothing changed; that is not a change worth a post', () => {
    const info = fakeNodeInfo('n1');
    const a = computeNodeStatus(info, undefined, t0);
    const b = computeNodeStatus(info, a, t1);
    expect(b.conditions?.[3].lastHeartbeatTime).toBe('2026-01-01T00:00:10Z');
    expect(b.conditions?.[3].lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(nodeStatusChanged(a, b)).toBe(false);
  });

  it("a node shutting down is not Ready, with the kubelet's message (aggregated with the runtime's)", () => {
    const ready = (o: Parameters<typeof fakeNodeInfo>[1]) =>
      computeNodeStatus(fakeNodeInfo('n1', o), undefined, t0).conditions?.find((c) => c.type === 'Ready');
    expect(ready({ shuttingDown: () => true })).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'node is shutting down',
    });
    expect(ready({ shuttingDown: () => true, runtimeReady: () => false })?.message).toBe(
      '[container runtime is down or not ready, node is shutting down]',
    );
    expect(ready({ shuttingDown: () => false })?.status).toBe('True');
  });

  it("the runtime network not ready makes the node not Ready with the kubelet's message, after the runtime's and before the shutdown's", () => {
    const ready = (o: Parameters<typeof fakeNodeInfo>[1]) =>
      computeNodeStatus(fakeNodeInfo('n1', o), undefined, t0).conditions?.find((c) => c.type === 'Ready');
    const network =
      'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized';
    expect(ready({ networkNotReady: () => network })).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
      message: network,
    });
    expect(
      ready({ networkNotReady: () => network, runtimeReady: () => false, shuttingDown: () => true })?.message,
    ).toBe(`[container runtime is down or not ready, ${network}, node is shutting down]`);
    expect(ready({ networkNotReady: () => undefined })?.status).toBe('True');
  });

  it('a flip of a condition is a change, with a new transition time', () => {
    const a = computeNodeStatus(fakeNodeInfo('n1'), undefined, t0);
    const b = computeNodeStatus(fakeNodeInfo('n1', { runtimeReady: () => false }), a, t1);
    const ready = b.conditions?.find((c) => c.type === 'Ready');
    expect([ready?.status, ready?.reason, ready?.lastTransitionTime]).toEqual([
      'False',
      'KubeletNotReady',
      '2026-01-01T00:00:10Z',
    ]);
    expect(nodeStatusChanged(a, b)).toBe(true);
  });

  it('ignores what others own on the server copy (images, extra conditions)', () => {
    const ours = computeNodeStatus(fakeNodeInfo('n1'), undefined, t0);
    const server = {
      ...ours,
      images: [{ names: ['x'] }],
      conditions: [...(ours.conditions ?? []), { type: 'NetworkUnavailable', status: 'False' }],
    };
    expect(nodeStatusChanged(server, computeNodeStatus(fakeNodeInfo('n1'), server, t1))).toBe(false);
  });

  it('registers with the default labels, --node-labels and --register-with-taints', () => {
    const info = fakeNodeInfo('n1', {
      taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
    });
    const node = buildNode(info, computeNodeStatus(info, undefined, t0));
    expect(node.metadata?.labels).toEqual({
      'beta.kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/hostname': 'n1',
      'kubernetes.io/os': 'linux',
      'example.com/pool': 'control-plane',
    });
    expect(node.spec?.taints).toEqual([{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]);
  });
});
