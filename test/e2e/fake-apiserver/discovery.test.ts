// Discovery documents in both forms client-go understands, and watch over HTTP/1.1 chunked encoding.
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer, type KeyPair } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { TestClient } from './client.js';

let server: FakeApiServer;
let admin: TestClient;
let cert: KeyPair;

beforeAll(async () => {
  server = await startFakeApiServer();
  cert = server.issueClientCert('system:admin', ['system:masters']);
  admin = new TestClient(server, { cert });
});

afterAll(async () => {
  admin?.close();
  await server?.dispose();
});

const AGGREGATED =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

describe('discovery', () => {
  it('serves legacy discovery: /api, /api/v1, /apis, /apis/<group>/v1', async () => {
    expect((await admin.get('/api')).json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const v1 = await admin.get('/api/v1');
    const names = (v1.json.resources as { name: string }[]).map((r) => r.name);
    expect(names).toEqual(
      expect.arrayContaining(['pods', 'pods/status', 'nodes', 'nodes/status', 'namespaces', 'events']),
    );
    const groups = await admin.get('/apis');
    expect((groups.json.groups as { name: string }[]).map((g) => g.name)).toEqual([
      'coordination.k8s.io',
      'events.k8s.io',
      'certificates.k8s.io',
      'node.k8s.io',
      'authentication.k8s.io',
      'authorization.k8s.io',
      'metrics.k8s.io',
    ]);
    const coord = await admin.get('/apis/coordination.k8s.io/v1');
    expect(coord.json).toMatchObject({
      kind: 'APIResourceList',
      groupVersion: 'coordination.k8s.io/v1',
      resources: [{ name: 'leases', namespaced: true, kind: 'Lease' }],
    });
    expect((await admin.get('/version')).json).toMatchObject({ major: '1', minor: '32', gitVersion: 'v1.32.4' });
  });

  it('serves aggregated discovery v2 when asked as kubectl 1.32 asks', async () => {
    const r = await admin.get('/api', { accept: AGGREGATED });
    expect(r.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(r.json).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2' });
    const resources = (
      r.json.items as {
        versions: { resources: { resource: string; scope: string; subresources?: { subresource: string }[] }[] }[];
      }[]
    )[0].versions[0].resources;
    expect(resources.find((x) => x.resource === 'pods')).toMatchObject({
      scope: 'Namespaced',
      subresources: [
        { subresource: 'status' },
        { subresource: 'ephemeralcontainers' },
        { subresource: 'resize' },
        { subresource: 'log' },
        { subresource: 'exec' },
        { subresource: 'attach' },
        { subresource: 'portforward' },
      ],
    });
    expect(resources.find((x) => x.resource === 'nodes')?.scope).toBe('Cluster');
  });

  it('answers 404 for paths and resources it does not serve', async () => {
    expect((await admin.get('/apis/apps/v1/deployments')).status).toBe(404);
    expect((await admin.get('/api/v1/persistentvolumes')).status).toBe(404);
  });
});

describe('HTTP/1.1 watch', () => {
  it('streams newline-delimited events over chunked encoding', async () => {
    const base = await admin.post('/api/v1/namespaces/default/pods', {
      metadata: { name: 'h1w' },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    });
    const lines: string[] = [];
    let buf = '';
    const req = request(
      new URL(
        `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${String(base.json.metadata?.resourceVersion)}`,
        server.url,
      ),
      { ca: server.caPem, cert: cert.certPem, key: cert.keyPem, agent: false },
      (res) => {
        expect(res.headers['transfer-encoding']).toBe('chunked');
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          buf += d;
          const parts = buf.split('\n');
          buf = parts.pop() ?? '';
          lines.push(...parts.filter(Boolean));
        });
      },
    );
    req.on('error', () => undefined);
    req.end();
    try {
      await waitFor(
        () =>
          server.requests.some((r) => r.protocol === 'HTTP/1.1' && r.query.includes('watch=true') && r.status === 200),
        { timeoutMs: 10_000, what: 'the HTTP/1.1 watch' },
      );
      await admin.patch(
        '/api/v1/namespaces/default/pods/h1w',
        { metadata: { labels: { a: 'b' } } },
        'application/merge-patch+json',
      );
      await waitFor(() => lines.length >= 1, { timeoutMs: 10_000, what: 'an event line' });
      expect(JSON.parse(lines[0])).toMatchObject({
        type: 'MODIFIED',
        object: { metadata: { name: 'h1w', labels: { a: 'b' } } },
      });
    } finally {
      req.destroy();
    }
  });
});
