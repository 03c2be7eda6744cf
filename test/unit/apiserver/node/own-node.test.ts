// The node's own Node, watched (own-node.ts): the pod CIDR the controller assigns is told as its event
// arrives, a late event never undoes an answer of ours, and a status round reads what the server holds
// from the watch: no GET of the Node in any round (issue 31: one GET per round doubled a node's requests
// while no pod CIDR was known and the runtime's network was not ready).
import type { Node, NodeList } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import type { ApiClient, WatchEvent, WatchHandle } from '../../../../src/apiserver/client/client.js';
import { NodeRegistrar } from '../../../../src/apiserver/node/node-registration.js';
import { NodeStatusReporter } from '../../../../src/apiserver/node/node-status-reporter.js';
import { OwnNode } from '../../../../src/apiserver/node/own-node.js';
import { nodePodCIDRs } from '../../../../src/k8s/node-pod-cidr.js';
import { nullLogger } from '../../../../src/log/logger.js';
import type { NodeInfoSource } from '../../../../src/node/node-info.js';
import type { Clock } from '../../../../src/util/clock.js';
import { waitFor } from '../../../support/wait.js';
import { fakeNodeInfo } from '../../../e2e/apiserver/fakes.js';
import { FakeGate } from '../client/gate.js';

const node = (rv: string, spec: Node['spec'] = {}, status?: Node['status']): Node => ({
  metadata: { name: 'n1', uid: 'node-uid', resourceVersion: rv },
  spec,
  ...(status ? { status } : {}),
});

/** LIST and watch of the one Node, driven by the test. */
function watchedServer(listed: Node[]) {
  const asked: { path: string; query?: Record<string, unknown> }[] = [];
  let send: (e: WatchEvent<Node>) => void = () => {};
  const client = {
    list: async <T>(path: string, query?: Record<string, unknown>): Promise<T> => {
      asked.push({ path, query });
      return { items: listed, metadata: { resourceVersion: '5' } } satisfies NodeList as T;
    },
    watch: <T>(path: string, query: Record<string, unknown>, onEvent: (e: WatchEvent<T>) => void): WatchHandle => {
      asked.push({ path, query });
      send = onEvent as (e: WatchEvent<Node>) => void;
      let end: () => void = () => {};
      return { done: new Promise<void>((r) => (end = r)), stop: () => end() };
    },
  };
  return { client, asked, event: (e: WatchEvent<Node>) => send(e) };
}

describe('the node own Node watch', () => {
  it('lists and watches only its own Node, and tells each pod CIDR the controller assigns as it arrives', async () => {
    const server = watchedServer([node('5')]);
    const own = new OwnNode(server.client, new FakeGate(), 'n1', nullLogger);
    const told: string[] = [];
    own.onChange((n) => {
      const cidrs = nodePodCIDRs(n);
      if (cidrs) told.push(cidrs);
    });
    own.start();
    await waitFor(() => server.asked.length === 2, { timeoutMs: 5000, intervalMs: 5, what: 'the LIST and the watch' });
    expect(server.asked.map((a) => [a.path, a.query?.fieldSelector])).toEqual([
      ['/api/v1/nodes', 'metadata.name=n1'],
      ['/api/v1/nodes', 'metadata.name=n1'],
    ]);
    expect(own.node()?.metadata?.resourceVersion).toBe('5');
    expect(told).toEqual([]);
    server.event({
      type: 'MODIFIED',
      object: node('7', { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00:1::/64'] }),
    });
    expect(told).toEqual(['10.244.1.0/24,fd00:1::/64']);
    // An older server sets podCIDR alone.
    expect(nodePodCIDRs(node('8', { podCIDR: '10.244.2.0/24' }))).toBe('10.244.2.0/24');
    await own.stop();
  });

  it('keeps an answer of ours against a late event, and forgets the Node once deleted', async () => {
    const server = watchedServer([]);
    const own = new OwnNode(server.client, new FakeGate(), 'n1', nullLogger);
    own.start();
    await waitFor(() => server.asked.length === 2, { timeoutMs: 5000, intervalMs: 5, what: 'the LIST and the watch' });
    expect(own.node()).toBeUndefined();
    own.observe(node('12', {}, { phase: 'Running' }));
    server.event({ type: 'ADDED', object: node('10') });
    expect(own.node()?.metadata?.resourceVersion).toBe('12');
    server.event({ type: 'MODIFIED', object: node('13') });
    expect(own.node()?.metadata?.resourceVersion).toBe('13');
    server.event({ type: 'DELETED', object: node('14') });
    expect(own.node()).toBeUndefined();
    await own.stop();
  });
});

describe('a node status round', () => {
  function apiServer() {
    const calls: string[] = [];
    const client = {
      create: async (_p: string, body: Node) => (
        calls.push('create'),
        {
          ...body,
          metadata: {
            ...body.metadata,
            uid: 'node-uid',
            resourceVersion: '1',
            creationTimestamp: '2026-01-01T00:00:00Z',
          },
        }
      ),
      get: async () => {
        calls.push('get');
        throw new Error('a round must not read the Node');
      },
      patch: async (_p: string, _t: string, body: { status: Node['status'] }) => (
        calls.push('patch'),
        { ...node(String(calls.length + 1)), status: body.status }
      ),
    } as unknown as ApiClient;
    return { calls, client };
  }

  /** A status reporter whose watched Node is a plain variable, set by the test or by the reporter's own answers. */
  function reporterOf(client: ApiClient, info: NodeInfoSource, clock: Clock) {
    let watched: Node | undefined;
    const own = { node: () => watched, observe: (n: Node) => void (watched = n) };
    const registrar = new NodeRegistrar(client, info, clock, nullLogger);
    return { own, reporter: new NodeStatusReporter(client, info, registrar, clock, 300_000, { event: () => {} }, own) };
  }

  it('never GETs the Node, with no pod CIDR and the network not ready, and posts only what changed', async () => {
    const server = apiServer();
    const info = fakeNodeInfo('n1', {
      networkNotReady: () =>
        'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:x',
    });
    let tick = 0;
    const { reporter, own } = reporterOf(server.client, info, {
      now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick)),
    });
    // A minute of rounds, 10 s apart.
    for (; tick <= 60; tick += 10) await reporter.sync();
    expect(server.calls).toEqual(['create']);
    expect(own.node()?.metadata?.uid).toBe('node-uid');
    expect(reporter.upToDate()).toBe(true);
  });

  it('posts at once when the watched Node says otherwise (the node lifecycle controller set Ready Unknown)', async () => {
    const server = apiServer();
    const info = fakeNodeInfo('n1');
    const { reporter, own } = reporterOf(server.client, info, { now: () => new Date(Date.UTC(2026, 0, 1)) });
    await reporter.sync();
    expect(server.calls).toEqual(['create']);
    const registered = own.node()!;
    const conditions = (registered.status?.conditions ?? []).map((c) =>
      c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown' } : c,
    );
    own.observe({
      ...registered,
      metadata: { ...registered.metadata, resourceVersion: '9' },
      status: { ...registered.status, conditions },
    });
    expect(reporter.upToDate()).toBe(false);
    await reporter.sync();
    expect(server.calls).toEqual(['create', 'patch']);
    expect(own.node()?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(reporter.upToDate()).toBe(true);
  });
});
