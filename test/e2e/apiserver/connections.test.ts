// What one node costs the API server, counted at the server: TLS connections and requests. One
// HTTP/2 connection carries everything (watch, writes, probe), as client-go's does; after an outage
// the node renews its Lease once and watches again from where it was (no LIST); a watch the server
// ends is opened again from its last resourceVersion; only a 410 brings a LIST. HTTP/1.1 still
// works against a server that offers no h2 (each watch on a connection of its own, so that no number
// of watches holds back a write), a new connection after an outage asks for h2 again, and a rotated
// client certificate moves to a new connection while the old one's streams finish.
import { join } from 'node:path';
import type { Lease } from 'kubernetes-types/coordination/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiSide, type ApiSide } from '../../../src/apiserver/api-side.js';
import { ApiClient } from '../../../src/apiserver/client/client.js';
import type { TlsKeyPair } from '../../../src/apiserver/client/kubeconfig.js';
import { loadKubeconfig } from '../../../src/apiserver/client/kubeconfig.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { apiMicroTime } from '../../../src/util/api-time.js';
import { startFakeApiServer, type FakeApiServer, type RequestRecord } from '../../support/fake-apiserver/index.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { FakeStaticPods, FakeStatuses, fakeNodeInfo, runningStatus, staticPod } from './fakes.js';

const NODE = 'conn-1';
const RENEW_MS = 10_000; // nodeLeaseDurationSeconds 40, renewed every quarter
const dir = useTmpDir('apiserver-connections');
let api: FakeApiServer;
let agent: ApiSide | undefined;
let startedAt = 0;
const log = memoryLogger(2);
const pods = new FakeStaticPods(['etcd', 'kube-apiserver', 'kube-scheduler'].map((n) => staticPod(n, NODE)));
const statuses = new FakeStatuses();

const isWatch = (r: RequestRecord): boolean => /(^|&)watch=/.test(r.query);
const podLists = (from: number): RequestRecord[] =>
  api.requests.slice(from).filter((r) => r.method === 'GET' && r.path === '/api/v1/pods' && !isWatch(r));
const podWatches = (from: number): RequestRecord[] =>
  api.requests.slice(from).filter((r) => r.path === '/api/v1/pods' && isWatch(r));
const leaseRenewals = (from: number): RequestRecord[] =>
  api.requests.slice(from).filter((r) => r.path.startsWith('/apis/coordination.k8s.io/') && r.method === 'PUT');
const rvOf = (r: RequestRecord): string | null => new URLSearchParams(r.query).get('resourceVersion');

function converged(): boolean {
  return pods.list().every((sp) => {
    const m = api.object('pods', sp.pod.metadata.namespace, sp.pod.metadata.name) as
      { metadata: { annotations?: Record<string, string> }; status?: { phase?: string } } | undefined;
    return m?.metadata.annotations?.['kubernetes.io/config.mirror'] === sp.uid && m.status?.phase === 'Running';
  });
}

/** Waits until a lease tick went `afterMs` ago (and not before `notBefore`): the next one is a full period away. */
async function justAfterTick(afterMs: number, notBefore = 0): Promise<void> {
  const phase = (): number => (performance.now() - startedAt) % RENEW_MS;
  await waitFor(() => performance.now() >= notBefore && phase() >= afterMs && phase() < afterMs + 300, {
    timeoutMs: 3 * RENEW_MS,
    intervalMs: 20,
    what: 'a moment just after a lease tick',
  });
}

beforeAll(async () => {
  api = await startFakeApiServer();
  const kubeconfig = api.writeKubeconfig(join(dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp));
  startedAt = performance.now();
  agent = startApiSide({
    kubeconfigPath: kubeconfig,
    nodeInfo: fakeNodeInfo(NODE),
    staticPods: pods,
    statuses,
    logger: log.logger,
  });
  await waitFor(converged, { timeoutMs: 30_000, what: 'mirror pods with their statuses' });
});

afterAll(async () => {
  await agent?.stop();
  await api?.dispose();
});

describe('one node against the API server', () => {
  it('steady state: one HTTP/2 connection carries every request and the watch', async () => {
    const from = api.requests.length;
    const t0 = performance.now();
    // Three lease renewals: 20–30 s of steady state.
    await waitFor(() => leaseRenewals(from).length >= 3, { timeoutMs: 4 * RENEW_MS, what: 'three lease renewals' });
    const minutes = (performance.now() - t0) / 60_000;
    const steady = api.requests.slice(from).filter((r) => !isWatch(r));
    console.log(
      `steady state: ${(steady.length / minutes).toFixed(2)} requests per minute (${steady.map((r) => `${r.method} ${r.path}`).join(', ')})`,
    );
    expect(api.connections).toHaveLength(1);
    expect(api.connections[0]!.protocol).toBe('h2');
    expect(api.connections[0]!.closedAt).toBeUndefined();
    expect(new Set(api.requests.map((r) => r.connection))).toEqual(new Set([api.connections[0]!.id]));
    expect(api.requests.every((r) => r.protocol === 'HTTP/2')).toBe(true);
    // The watch is open all along: no LIST after the first.
    expect(podLists(0)).toHaveLength(1);
  });

  it('an outage and the return: one new connection, exactly one lease renewal, the watch again from its resourceVersion, no LIST', async () => {
    const connections = api.connections.length;
    await justAfterTick(200);
    await api.stop();
    const stoppedAt = performance.now();
    await waitFor(() => log.lines.some((l) => l.includes('API server unreachable')), {
      timeoutMs: 10_000,
      what: 'the agent to see the server gone',
    });
    // Away for more than a lease period, so a renewal tick is held meanwhile; back just after a tick.
    await justAfterTick(500, stoppedAt + RENEW_MS);
    const from = api.requests.length;
    const lastWatch = podWatches(0).at(-1)!;
    await api.start();
    await waitFor(() => leaseRenewals(from).length >= 1 && podWatches(from).length >= 1, {
      timeoutMs: 15_000,
      what: 'the lease renewed and the watch open again',
    });
    // Until the next tick (9 s away) nothing else may renew it.
    await waitFor(() => (performance.now() - startedAt) % RENEW_MS > 5_000, {
      timeoutMs: RENEW_MS,
      intervalMs: 50,
      what: '5 s after the return',
    });
    expect(leaseRenewals(from)).toHaveLength(1);
    expect(podLists(from)).toHaveLength(0);
    // From where the last watch got to (its resourceVersion, or an event's since), not from scratch.
    expect(Number(rvOf(podWatches(from)[0]!))).toBeGreaterThanOrEqual(Number(rvOf(lastWatch)));
    // The probes found nothing listening (no handshake); the first answer opened the one connection.
    expect(api.connections.length - connections).toBe(1);
    const newId = api.connections.at(-1)!.id;
    expect(api.requests.slice(from).every((r) => r.connection === newId)).toBe(true);
    expect(api.requests.slice(from).filter((r) => r.path === '/readyz').length).toBeLessThanOrEqual(1);
  });

  it('a watch the server ends is opened again from its last resourceVersion (the bookmark), with no LIST', async () => {
    const from = api.requests.length;
    const connections = api.connections.length;
    await waitFor(() => podWatches(0).some((r) => r.status === 200 && r.closedAt === undefined), {
      timeoutMs: 10_000,
      what: 'an open watch',
    });
    api.timeOutWatches();
    const rv = String(api.store.currentRv);
    await waitFor(() => podWatches(from).length >= 1, { timeoutMs: 10_000, what: 'the next watch' });
    expect(rvOf(podWatches(from)[0]!)).toBe(rv);
    expect(podLists(from)).toHaveLength(0);
    expect(api.connections.length).toBe(connections);
  });

  it('a 410 Gone brings exactly one LIST', async () => {
    const from = api.requests.length;
    // A fresh etcd: every watch ends, the next one is refused 410 (too old resource version).
    api.wipe();
    // (The Node is gone too; registering it again is the node status reporter's business, not this
    // test's.) The watches before ended early (the tests above), so the back-off has grown: up to ~25 s.
    await waitFor(
      () =>
        podWatches(from).some(
          (r) => r.status === 200 && r.closedAt === undefined && Number(rvOf(r)) >= api.store.oldestServableRv,
        ),
      {
        timeoutMs: 60_000,
        what: 'a watch from the new list',
      },
    ).catch((e: unknown) => {
      console.log(log.lines.filter((l) => l.includes('pods bound to')).join('\n'));
      throw e;
    });
    expect(podWatches(from).some((r) => Number(rvOf(r)) < api.store.oldestServableRv)).toBe(true); // the one refused 410
    expect(podLists(from)).toHaveLength(1);
  });
});

describe('the client alone', () => {
  it('speaks HTTP/1.1 to a server that offers no h2 (no ALPN), on a few kept-alive connections, the first the one that found out', async () => {
    const h1 = await startFakeApiServer({ http2: false });
    const client = new ApiClient(loadKubeconfig(h1.writeAdminKubeconfig(join(dir, 'h1.kubeconfig'))));
    try {
      await client.get('/api/v1/namespaces');
      // The handshake that found no h2 carried the request: no connection spent on finding out.
      expect(h1.connections).toHaveLength(1);
      await Promise.all(Array.from({ length: 20 }, () => client.get('/api/v1/namespaces')));
      await client.get('/api/v1/namespaces');
      expect(client.protocol).toBe('http/1.1');
      expect(h1.requests.every((r) => r.protocol === 'HTTP/1.1')).toBe(true);
      // At most the 8 connections of the requests' pool: the first asked for h2 and got http/1.1, the
      // pool's own ask for nothing.
      expect(h1.connections.length).toBeLessThanOrEqual(8);
      expect(h1.connections.map((c) => c.protocol)).toEqual(['http/1.1', ...h1.connections.slice(1).map(() => 'none')]);
    } finally {
      client.close();
      await h1.dispose();
    }
  });

  it("HTTP/1.1 with 12 watches open (more than the 8 connections of the requests' pool): a Lease renewal and a read still go, each watch on a connection of its own", async () => {
    const h1 = await startFakeApiServer({ http2: false });
    // A generous deadline: the request either goes while the watches are open or fails here.
    const client = new ApiClient(loadKubeconfig(h1.writeAdminKubeconfig(join(dir, 'h1-watches.kubeconfig'))), {
      timeoutMs: 30_000,
    });
    const watching = (): RequestRecord[] =>
      h1.requests.filter((r) => isWatch(r) && r.status === 200 && r.closedAt === undefined);
    const watches = Array.from({ length: 12 }, (_, i) =>
      // As the object manager watches each referenced ConfigMap alone.
      client.watch(
        '/api/v1/namespaces/default/configmaps',
        { fieldSelector: `metadata.name=cm-${i}`, timeoutSeconds: 300, allowWatchBookmarks: true },
        () => {},
      ),
    );
    try {
      await waitFor(() => watching().length === 12, { timeoutMs: 30_000, what: '12 watches open at the server' });
      const leases = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
      const lease = await client.create<Lease>(leases, {
        metadata: { name: 'h1-node' },
        spec: { holderIdentity: 'h1-node', leaseDurationSeconds: 40, renewTime: apiMicroTime(new Date()) },
      });
      const renewed = await client.update<Lease>(`${leases}/h1-node`, {
        ...lease,
        spec: { ...lease.spec, renewTime: apiMicroTime(new Date()) },
      });
      expect(renewed.metadata?.resourceVersion).not.toBe(lease.metadata?.resourceVersion);
      await client.get('/api/v1/namespaces/default');
      // The watches stayed open all along, each on its own connection; the requests went on others.
      expect(watching()).toHaveLength(12);
      const watchConnections = new Set(watching().map((r) => r.connection));
      expect(watchConnections.size).toBe(12);
      const requestConnections = new Set(h1.requests.filter((r) => !isWatch(r)).map((r) => r.connection));
      expect([...requestConnections].some((c) => watchConnections.has(c))).toBe(false);
    } finally {
      for (const w of watches) w.stop();
      client.close();
      await h1.dispose();
    }
  });

  it('a new connection after an outage asks for h2 again: HTTP/1.1 before, h2 once the server (its load balancer) offers it', async () => {
    const lb = await startFakeApiServer({ http2: false });
    const client = new ApiClient(loadKubeconfig(lb.writeAdminKubeconfig(join(dir, 'lb.kubeconfig'))));
    try {
      await client.get('/api/v1/namespaces');
      expect(client.protocol).toBe('http/1.1');
      await lb.stop();
      lb.offerHttp2(true);
      await expect(client.get('/api/v1/namespaces')).rejects.toThrow(/ECONNREFUSED/);
      await lb.start();
      await client.get('/api/v1/namespaces');
      expect(client.protocol).toBe('h2');
      expect(lb.connections.map((c) => c.protocol)).toEqual(['http/1.1', 'h2']);
      expect(lb.requests.at(-1)!.protocol).toBe('HTTP/2');
    } finally {
      client.close();
      await lb.dispose();
    }
  });

  it('a rotated client certificate: new requests on a new connection with it, the old connection closes at once, its watch ended as at its timeout (client-go closes its connections)', async () => {
    const first = api.issueClientCert('system:admin', ['system:masters']);
    const second = api.issueClientCert('system:admin', ['system:masters']);
    let pair: TlsKeyPair = { cert: Buffer.from(first.certPem), key: Buffer.from(first.keyPem) };
    const base = loadKubeconfig(api.writeAdminKubeconfig(join(dir, 'rot.kubeconfig')));
    const client = new ApiClient({
      ...base,
      cert: undefined,
      key: undefined,
      clientCertificate: { current: () => pair },
    });
    const from = api.requests.length;
    const connections = api.connections.length;
    try {
      await client.get('/api/v1/namespaces');
      let watchEnd: 'clean' | 'failed' | undefined;
      const watch = client.watch('/api/v1/namespaces', { timeoutSeconds: 60 }, () => {});
      watch.done.then(
        () => (watchEnd = 'clean'),
        () => (watchEnd = 'failed'),
      );
      await waitFor(
        () => api.requests.slice(from).some((r) => r.path === '/api/v1/namespaces' && isWatch(r) && r.status === 200),
        { timeoutMs: 10_000, what: 'the watch open' },
      );
      const old = api.connections.slice(connections);
      expect(old).toHaveLength(1);
      pair = { cert: Buffer.from(second.certPem), key: Buffer.from(second.keyPem) };
      await client.get('/api/v1/namespaces');
      const now = api.connections.slice(connections);
      expect(now).toHaveLength(2);
      expect(now[0]!.clientCert).not.toBe(now[1]!.clientCert);
      expect(api.requests.at(-1)!.connection).toBe(now[1]!.id);
      // The watch on the old connection ended as a server's timeout ends one (its owner watches
      // again from its resourceVersion, now on the new connection), and the old connection closed.
      await waitFor(() => watchEnd, { timeoutMs: 10_000, what: 'the watch on the old connection ended' });
      expect(watchEnd).toBe('clean');
      await waitFor(() => now[0]!.closedAt !== undefined, { timeoutMs: 10_000, what: 'the old connection to close' });
      const again = client.watch('/api/v1/namespaces', { timeoutSeconds: 60 }, () => {});
      await waitFor(
        () =>
          api.requests
            .slice(from)
            .filter((r) => r.path === '/api/v1/namespaces' && isWatch(r) && r.connection === now[1]!.id).length === 1,
        { timeoutMs: 10_000, what: 'a watch on the new connection' },
      );
      again.stop();
      await again.done;
      expect(api.connections.slice(connections)).toHaveLength(2);
      expect(now[1]!.closedAt).toBeUndefined();
    } finally {
      client.close();
    }
  });
});
