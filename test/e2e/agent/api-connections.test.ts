// What the packaged agent costs the API server, counted at the fake server (issue 20: one
// connection per node, one request per need after an outage, no LIST without a 410): a static pod
// (its mirror) and an API pod whose env reads a ConfigMap and the Services, so the node holds four
// watches (its pods, its own Node, the ConfigMap, the Services) beside the Lease and the statuses. One
// HTTP/2 connection carries all of it; after an outage one new connection, one Lease renewal for
// the return and every watch again from its resourceVersion; a watch the server ends is resumed
// from its bookmark; a 410 costs exactly one LIST of that collection.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer, type RequestRecord } from '../../support/fake-apiserver/index.js';
import { connectionsOf, mostOpenAtOnce } from '../../support/fake-apiserver/connection-counts.js';
import { busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'api-conn-e2e';
const USER = `system:node:${NODE}`;
/** nodeLeaseDurationSeconds 40, renewed every quarter. */
const RENEW_MS = 10_000;
const h = useAgentHarness('api-connections', NODE);
let api: FakeApiServer;

/** The node's four watched collections, each with its own field selector. */
const COLLECTIONS = {
  pods: { path: '/api/v1/pods', selector: `spec.nodeName=${NODE}` },
  node: { path: '/api/v1/nodes', selector: `metadata.name=${NODE}` },
  configmap: { path: '/api/v1/namespaces/kube-system/configmaps', selector: 'metadata.name=proxy-settings' },
  services: { path: '/api/v1/services', selector: null },
} as const;
type Collection = keyof typeof COLLECTIONS;

const mine = (from = 0): RequestRecord[] => api.requests.slice(from).filter((r) => r.user === USER);
const query = (r: RequestRecord): URLSearchParams => new URLSearchParams(r.query);
const isWatch = (r: RequestRecord): boolean => ['1', 'true'].includes(query(r).get('watch') ?? '');
const of =
  (c: Collection) =>
  (r: RequestRecord): boolean =>
    r.method === 'GET' && r.path === COLLECTIONS[c].path && query(r).get('fieldSelector') === COLLECTIONS[c].selector;
const lists = (c: Collection, from = 0): RequestRecord[] => mine(from).filter((r) => of(c)(r) && !isWatch(r));
const watches = (c: Collection, from = 0): RequestRecord[] => mine(from).filter((r) => of(c)(r) && isWatch(r));
const allLists = (from = 0): RequestRecord[] =>
  mine(from).filter(
    (r) => r.method === 'GET' && (Object.keys(COLLECTIONS) as Collection[]).some((c) => of(c)(r)) && !isWatch(r),
  );
const openWatch = (c: Collection, from = 0): RequestRecord | undefined =>
  watches(c, from).find((r) => r.status === 200 && r.closedAt === undefined);
const leaseRenewals = (from = 0): RequestRecord[] =>
  mine(from).filter(
    (r) => r.method === 'PUT' && r.path === `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODE}`,
  );
const rvOf = (r: RequestRecord): number => Number(query(r).get('resourceVersion'));

/** As a DaemonSet controller writes it, its env read from a ConfigMap (and, as every pod's, from the Services). */
const proxyPod = {
  metadata: { name: 'proxy', namespace: 'kube-system', labels: { 'k8s-app': 'proxy' } },
  spec: {
    nodeName: NODE,
    hostNetwork: true,
    terminationGracePeriodSeconds: 2,
    restartPolicy: 'Always',
    containers: [
      {
        name: 'main',
        image: TEST_IMAGES.busybox,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', SLEEP_LOOP],
        env: [{ name: 'MODE', valueFrom: { configMapKeyRef: { name: 'proxy-settings', key: 'mode' } } }],
      },
    ],
  },
};

async function running(name: string): Promise<string | undefined> {
  const runtime = h.cri().runtime;
  for (const p of (await listRuntimePods(runtime)).values()) {
    if (p.name !== name || p.namespace !== 'kube-system') continue;
    const c = (await readRuntimePod(runtime, p.uid))?.containers.find(
      (x) => x.state === ContainerState.CONTAINER_RUNNING,
    );
    if (c) return c.id;
  }
  return undefined;
}

/** When a steady renewal came: the renewals go at the ticks of one interval timer, this gives their phase. */
let tick = 0;

/** A moment `afterMs` past one of the node's lease ticks (and not before `notBefore`): the next one is a full period away. */
async function justAfterTick(afterMs: number, notBefore = 0): Promise<void> {
  const phase = (): number => (performance.now() - tick) % RENEW_MS;
  await waitFor(() => performance.now() >= notBefore && phase() >= afterMs && phase() < afterMs + 300, {
    timeoutMs: 3 * RENEW_MS,
    intervalMs: 20,
    what: 'a moment just after a lease tick',
  });
}

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  api.seedObject('configmaps', {
    metadata: { name: 'proxy-settings', namespace: 'kube-system' },
    data: { mode: 'iptables' },
  });
  const kubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), USER, ['system:nodes']);
  h.write('web.yaml', busyboxPod('web', SLEEP_LOOP));
  h.launch({ extraArgs: ['--v=2', `--kubeconfig=${kubeconfig}`] });
});

afterAll(async () => {
  await api?.dispose();
});

describe('the packaged agent against the API server: connections and requests', () => {
  it('steady state with a static pod and an API pod: exactly one HTTP/2 connection carries everything', async () => {
    await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node registered' });
    api.seedObject('pods', proxyPod as never);
    await waitFor(() => running('proxy'), { timeoutMs: 60_000, what: 'the API pod running' });
    await waitFor(() => running(`web-${NODE}`), { timeoutMs: 60_000, what: 'the static pod running' });
    const phase = (name: string): string | undefined => api.pod('kube-system', name)?.status?.phase;
    await waitFor(() => phase(`web-${NODE}`) === 'Running' && phase('proxy') === 'Running', {
      timeoutMs: 30_000,
      what: 'the mirror pod and the API pod Running in the API',
    });
    for (const c of Object.keys(COLLECTIONS) as Collection[])
      await waitFor(() => openWatch(c), { timeoutMs: 30_000, what: `the ${c} watch open` });
    // Three renewals: 20–30 s of steady state.
    const from = api.requests.length;
    const t0 = performance.now();
    await waitFor(() => leaseRenewals(from).length >= 3, { timeoutMs: 4 * RENEW_MS, what: 'three lease renewals' });
    tick = leaseRenewals().at(-1)!.receivedAt;
    const steady = mine(from).filter((r) => !isWatch(r));
    console.log(
      `steady state: ${((steady.length * 60_000) / (performance.now() - t0)).toFixed(2)} requests a minute (${steady.map((r) => `${r.method} ${r.path}`).join(', ')})`,
    );
    // The status rounds read the Node from its watch: no GET of it (issue 31).
    expect(mine(from).filter((r) => r.method === 'GET' && r.path === `/api/v1/nodes/${NODE}`)).toEqual([]);
    const connections = connectionsOf(api, USER);
    expect(connections).toHaveLength(1);
    expect(connections[0]!.protocol).toBe('h2');
    expect(connections[0]!.closedAt).toBeUndefined();
    expect(mine().every((r) => r.connection === connections[0]!.id && r.protocol === 'HTTP/2')).toBe(true);
    // Each collection listed once, at start; its watch open since.
    for (const c of Object.keys(COLLECTIONS) as Collection[]) expect(lists(c)).toHaveLength(1);
  });

  it('an outage and the return: one new connection, exactly one Lease renewal, every watch again from its resourceVersion, no LIST', async () => {
    const before = connectionsOf(api, USER).length;
    const lastWatch = Object.fromEntries(
      (Object.keys(COLLECTIONS) as Collection[]).map((c) => [c, watches(c).at(-1)!]),
    ) as Record<Collection, RequestRecord>;
    await justAfterTick(200);
    await api.stop();
    const stoppedAt = performance.now();
    await h
      .agent()
      .waitForLog(
        (r) => String(r.msg).startsWith('API server unreachable'),
        'the agent to see the server gone',
        10_000,
      );
    // Away for more than a lease period (a tick held meanwhile); back just after a tick.
    await justAfterTick(500, stoppedAt + RENEW_MS);
    const from = api.requests.length;
    await api.start();
    await waitFor(
      () =>
        leaseRenewals(from).length >= 1 && (Object.keys(COLLECTIONS) as Collection[]).every((c) => openWatch(c, from)),
      { timeoutMs: 15_000, what: 'the lease renewed and every watch open again' },
    );
    // Until the next tick nothing else may renew it.
    await justAfterTick(5_000);
    expect(leaseRenewals(from)).toHaveLength(1);
    expect(allLists(from)).toEqual([]);
    for (const c of Object.keys(COLLECTIONS) as Collection[]) {
      const next = watches(c, from);
      expect(next.length).toBeGreaterThanOrEqual(1);
      expect(rvOf(next[0]!)).toBeGreaterThanOrEqual(rvOf(lastWatch[c]));
    }
    const now = connectionsOf(api, USER);
    expect(now.length - before).toBe(1);
    expect(now.at(-1)!.protocol).toBe('h2');
    expect(mine(from).every((r) => r.connection === now.at(-1)!.id)).toBe(true);
    expect(mostOpenAtOnce(now)).toBe(1);
    // The probes found nothing listening (refused connects, no request); the first answer opened the connection.
    expect(mine(from).filter((r) => r.path === '/readyz').length).toBeLessThanOrEqual(1);
    console.log(
      `after the return: ${mine(from)
        .filter((r) => !isWatch(r))
        .map((r) => `${r.method} ${r.path}`)
        .join(', ')}`,
    );
  });

  it("a watch the server ends is resumed from its bookmark's resourceVersion, with no LIST and no new connection", async () => {
    const from = api.requests.length;
    const connections = connectionsOf(api, USER).length;
    api.timeOutWatches();
    const rv = api.store.currentRv;
    await waitFor(() => (Object.keys(COLLECTIONS) as Collection[]).every((c) => openWatch(c, from)), {
      timeoutMs: 60_000,
      what: 'every watch open again',
    });
    for (const c of Object.keys(COLLECTIONS) as Collection[]) expect(rvOf(watches(c, from)[0]!)).toBe(rv);
    expect(allLists(from)).toEqual([]);
    expect(connectionsOf(api, USER)).toHaveLength(connections);
  });

  it('a 410 Gone brings exactly one LIST of each collection', async () => {
    const from = api.requests.length;
    // etcd compacted past every resourceVersion the node holds: the watches end, the next are told 410.
    api.compact();
    await waitFor(
      () =>
        (Object.keys(COLLECTIONS) as Collection[]).every(
          (c) =>
            lists(c, from).length >= 1 &&
            watches(c, from).some(
              (r) => r.status === 200 && r.closedAt === undefined && rvOf(r) >= api.store.oldestServableRv,
            ),
        ),
      {
        timeoutMs: 90_000,
        what: 'every collection listed and watched again',
      },
    );
    for (const c of Object.keys(COLLECTIONS) as Collection[]) {
      expect(lists(c, from)).toHaveLength(1);
      expect(watches(c, from).some((r) => rvOf(r) < api.store.oldestServableRv)).toBe(true); // the one refused 410
    }
    expect(connectionsOf(api, USER)).toHaveLength(2);
    expect(await running('proxy')).toBeDefined();
  });
});
