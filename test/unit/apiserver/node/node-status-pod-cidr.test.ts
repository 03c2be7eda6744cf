// The Node's spec.podCIDRs, read where the node status loop already has the Node (the registration
// answer, each status post's answer) and, only while no pod CIDR is known and the runtime's network
// is not ready, by one GET per round: told to the wiring, which hands it to the runtime.
import type { Node } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../../src/apiserver/client/client.js';
import { NodeRegistrar } from '../../../../src/apiserver/node/node-registration.js';
import { NodeStatusReporter } from '../../../../src/apiserver/node/node-status-reporter.js';
import { nullLogger } from '../../../../src/log/logger.js';
import { fakeNodeInfo } from '../../../e2e/apiserver/fakes.js';

function fakeServer() {
  const node: Node = { metadata: { name: 'n1', uid: 'node-uid' }, spec: {} };
  const calls: string[] = [];
  let failGets = 0;
  const client = {
    create: async (_p: string, body: Node) => (
      calls.push('create'),
      {
        ...body,
        metadata: { ...body.metadata, uid: 'node-uid', creationTimestamp: '2026-01-01T00:00:00Z' },
        spec: { ...node.spec },
      }
    ),
    get: async () => {
      calls.push('get');
      if (failGets-- > 0) throw new Error('connection reset');
      return structuredClone(node);
    },
    patch: async (_p: string, _t: string, body: { status: Node['status'] }) => (
      calls.push('patch'),
      { ...structuredClone(node), status: body.status }
    ),
  } as unknown as ApiClient;
  return { node, calls, client, failNextGets: (n: number) => (failGets = n) };
}

describe('the pod CIDR from the Node', () => {
  it('is read each round only while none is known and the network is not ready, then comes with the status answers', async () => {
    const server = fakeServer();
    let network: string | undefined =
      'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:x';
    let tick = 0;
    const info = fakeNodeInfo('n1', { networkNotReady: () => network, runtimeReady: () => tick % 2 === 0 });
    const clock = { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick)) };
    const told: string[] = [];
    const reporter = new NodeStatusReporter(
      server.client,
      info,
      new NodeRegistrar(server.client, info, clock, nullLogger),
      clock,
      300_000,
      { event: () => {} },
      (c) => told.push(c),
    );
    await reporter.sync();
    expect(server.calls).toEqual(['create', 'get']);
    // A failed read does not hold back the round's post.
    server.failNextGets(1);
    tick++;
    await reporter.sync();
    expect(server.calls.slice(2)).toEqual(['get', 'patch']);
    expect(told).toEqual([]);
    // kube-controller-manager allocates one; the next round's read finds it.
    server.node.spec = { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00:1::/64'] };
    tick++;
    await reporter.sync();
    // Told by the read and by that round's post answer: the runtime side sends each value once.
    expect(told).toEqual(['10.244.1.0/24,fd00:1::/64', '10.244.1.0/24,fd00:1::/64']);
    // Known now: no more reads, only what the posts answer with.
    network = undefined;
    tick++;
    await reporter.sync();
    expect(server.calls.slice(4)).toEqual(['get', 'patch', 'patch']);
    expect(told).toEqual(['10.244.1.0/24,fd00:1::/64', '10.244.1.0/24,fd00:1::/64', '10.244.1.0/24,fd00:1::/64']);
  });

  it('never reads the Node while the network is ready (a CNI that needs no pod CIDR)', async () => {
    const server = fakeServer();
    const info = fakeNodeInfo('n1', { networkNotReady: () => undefined });
    const clock = { now: () => new Date(Date.UTC(2026, 0, 1)) };
    const reporter = new NodeStatusReporter(
      server.client,
      info,
      new NodeRegistrar(server.client, info, clock, nullLogger),
      clock,
      300_000,
      { event: () => {} },
      () => {},
    );
    await reporter.sync();
    await reporter.sync();
    expect(server.calls).toEqual(['create']);
  });
});
