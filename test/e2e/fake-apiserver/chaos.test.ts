// The chaos controls: stop/start with data kept, wipe, injected failures, latency and hanging.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { makeTmpDir, removeTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { TestClient } from './client.js';
import { Kubectl } from './kubectl.js';

let server: FakeApiServer;
let admin: TestClient;
let dir: string;

beforeAll(async () => {
  dir = makeTmpDir('fake-apiserver-chaos');
  server = await startFakeApiServer();
  admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
});

afterAll(async () => {
  admin?.close();
  await server?.dispose();
  if (dir) removeTmpDir(dir);
});

const pod = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }] } });

describe('restart and wipe', () => {
  it('stop() drops connections and watches; start() serves the same data on the same port', async () => {
    const created = await admin.post('/api/v1/namespaces/default/pods', pod('survivor'));
    expect(created.status).toBe(201);
    const port = server.port;
    const watch = admin.watch(
      `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${String(created.json.metadata?.resourceVersion)}`,
    );
    await waitFor(() => server.requests.some((r) => r.query.includes('watch=1') && r.status === 200), {
      timeoutMs: 10_000,
      what: 'the watch to open',
    });
    await server.stop();
    expect(server.running).toBe(false);
    await waitFor(() => watch.ended, { timeoutMs: 10_000, what: 'the watch to be cut' });
    await expect(admin.get('/api/v1/namespaces/default/pods/survivor')).rejects.toThrow();
    await server.start();
    expect(server.port).toBe(port);
    admin.close();
    const again = await admin.get('/api/v1/namespaces/default/pods/survivor');
    expect(again.status).toBe(200);
    expect(again.json.metadata?.uid).toBe(created.json.metadata?.uid);
    // The resourceVersion a client held still works after the restart (etcd intact).
    const resumed = admin.watch(
      `/api/v1/namespaces/default/pods?watch=1&resourceVersion=${String(created.json.metadata?.resourceVersion)}`,
    );
    try {
      await admin.post('/api/v1/namespaces/default/pods', pod('after-restart'));
      await waitFor(() => resumed.events.some((e) => e.object.metadata?.name === 'after-restart'), {
        timeoutMs: 10_000,
        what: 'the resumed watch',
      });
      expect(resumed.events.every((e) => e.type === 'ADDED')).toBe(true);
    } finally {
      resumed.close();
    }
  });

  it('wipe() is a fresh etcd: objects gone, namespaces back, old resourceVersions 410', async () => {
    const c = await admin.post('/api/v1/namespaces/default/pods', pod('doomed'));
    server.wipe();
    expect(server.object('pods', 'default', 'doomed')).toBeUndefined();
    expect(server.objects('namespaces').map((n) => n.metadata.name)).toEqual([
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]);
    expect((await admin.get('/api/v1/namespaces/default/pods/doomed')).status).toBe(404);
    const watch = admin.watch(`/api/v1/pods?watch=1&resourceVersion=${String(c.json.metadata?.resourceVersion)}`);
    try {
      await waitFor(() => watch.ended && watch.events.length === 1, { timeoutMs: 10_000, what: 'the 410 ERROR event' });
      expect(watch.events[0]).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    } finally {
      watch.close();
    }
  });
});

describe('injected faults', () => {
  it('failNext answers n requests with the given Status and Retry-After, then recovers', async () => {
    server.failNext(2, 503, 3);
    const a = await admin.get('/api/v1/nodes');
    const b = await admin.get('/api/v1/nodes');
    const c = await admin.get('/api/v1/nodes');
    expect([a.status, b.status, c.status]).toEqual([503, 503, 200]);
    expect(a.headers['retry-after']).toBe('3');
    expect(a.json).toMatchObject({
      kind: 'Status',
      reason: 'ServiceUnavailable',
      code: 503,
      details: { retryAfterSeconds: 3 },
    });
    server.failNext(1, 429, 1);
    const t = await admin.get('/api/v1/nodes');
    expect(t.json).toMatchObject({ reason: 'TooManyRequests', code: 429 });
    server.failNext(1, 500);
    const i = await admin.get('/api/v1/nodes');
    expect(i.json).toMatchObject({ reason: 'InternalError', code: 500 });
    expect(i.headers['retry-after']).toBeUndefined();
  });

  it('kubectl retries a 429 with Retry-After and then succeeds', async () => {
    const kubectl = new Kubectl(server.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
    await kubectl.ok(['get', 'ns']); // warm the discovery cache
    const path = '/api/v1/namespaces/default';
    server.failNext(2, 429, 1, (r) => r.path === path);
    const out = await kubectl.ok(['get', 'ns', 'default', '-o', 'name']);
    expect(out).toBe('namespace/default\n');
    expect(server.requests.filter((r) => r.path === path).map((r) => r.status)).toEqual([429, 429, 200]);
  });

  it('setLatency delays every answer', async () => {
    server.setLatency(300);
    try {
      const t0 = Date.now();
      expect((await admin.get('/version')).status).toBe(200);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    } finally {
      server.setLatency(0);
    }
  });

  it('hang(true) accepts requests and never answers them; stop() cuts them', async () => {
    server.hang(true);
    let settled: 'pending' | 'answered' | 'failed' = 'pending';
    const hung = admin.get('/api/v1/namespaces').then(
      () => (settled = 'answered'),
      () => (settled = 'failed'),
    );
    await waitFor(() => server.requests.some((r) => r.path === '/api/v1/namespaces' && r.status === 0), {
      timeoutMs: 10_000,
      what: 'the hung request to arrive',
    });
    server.hang(false);
    const other = TestClient.forUser(server, 'system:admin', ['system:masters']);
    expect((await other.get('/version')).status).toBe(200);
    other.close();
    expect(settled).toBe('pending');
    await server.stop();
    await hung;
    expect(settled).toBe('failed');
    await server.start();
  });
});
