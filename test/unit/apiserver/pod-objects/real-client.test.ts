// The pod objects on the real API client (src/apiserver/client.ts) against a small HTTP/2 server
// that answers the few paths they use: every LIST, watch and TokenRequest goes over one
// connection, and a ConfigMap change reaches onChange through a real watch stream.
import { createSecureServer, type Http2SecureServer, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { ConfigMap } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../../src/apiserver/client/client.js';
import { Connectivity } from '../../../../src/apiserver/client/connectivity.js';
import { ApiPodObjects } from '../../../../src/apiserver/pod-objects/api-pod-objects.js';
import { nullLogger } from '../../../../src/log/logger.js';
import type { PodRef } from '../../../../src/node/pod-objects.js';
import { createPki } from '../../../support/fake-apiserver/pki.js';
import { makeTmpDir, removeTmpDir } from '../../../support/tmp.js';
import { waitFor } from '../../../support/wait.js';

interface Watcher {
  path: string;
  name: string | undefined;
  stream: ServerHttp2Stream;
}

class SmallApiServer {
  sessions = 0;
  readonly requests: string[] = [];
  readonly watchers = new Set<Watcher>();
  private rv = 1;
  private readonly configMaps = new Map<string, ConfigMap>();
  server!: Http2SecureServer;

  async start(key: string, cert: string): Promise<string> {
    this.server = createSecureServer({ key, cert });
    this.server.on('session', () => this.sessions++);
    this.server.on('stream', (stream, headers) =>
      this.handle(stream, String(headers[':method']), new URL(String(headers[':path']), 'https://x')),
    );
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  putConfigMap(name: string, data: Record<string, string>): void {
    const cm: ConfigMap = {
      metadata: { name, namespace: 'kube-system', uid: `uid-${name}`, resourceVersion: String(++this.rv) },
      data,
    };
    const had = this.configMaps.has(name);
    this.configMaps.set(name, cm);
    for (const w of this.watchers)
      if (w.path.endsWith('/configmaps') && w.name === name)
        w.stream.write(JSON.stringify({ type: had ? 'MODIFIED' : 'ADDED', object: cm }) + '\n');
  }

  private handle(stream: ServerHttp2Stream, method: string, url: URL): void {
    stream.on('error', () => {});
    this.requests.push(`${method} ${url.pathname}${url.searchParams.get('watch') ? ' watch' : ''}`);
    const json = (code: number, body: unknown): void => {
      stream.respond({ ':status': code, 'content-type': 'application/json' });
      stream.end(JSON.stringify(body));
    };
    const name = url.searchParams.get('fieldSelector')?.replace(/^metadata\.name=/, '');
    if (method === 'GET' && url.searchParams.get('watch')) {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      const w: Watcher = { path: url.pathname, name, stream };
      this.watchers.add(w);
      stream.on('close', () => this.watchers.delete(w));
      return;
    }
    if (method === 'GET' && url.pathname === '/api/v1/namespaces/kube-system/configmaps') {
      const items = [...this.configMaps.values()].filter((c) => c.metadata?.name === name);
      return json(200, { kind: 'ConfigMapList', items, metadata: { resourceVersion: String(this.rv) } });
    }
    if (method === 'GET' && url.pathname === '/api/v1/services')
      return json(200, { kind: 'ServiceList', items: [], metadata: { resourceVersion: String(this.rv) } });
    if (method === 'POST' && url.pathname.endsWith('/token')) {
      let body = '';
      stream.on('data', (c: Buffer) => (body += c.toString()));
      stream.on('end', () => {
        const req = JSON.parse(body) as { spec: { expirationSeconds: number } };
        json(201, {
          ...req,
          status: {
            token: 'header.payload.sig',
            expirationTimestamp: new Date(Date.now() + req.spec.expirationSeconds * 1000).toISOString(),
          },
        });
      });
      return;
    }
    json(404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'not here' });
  }
}

const pod = (uid: string, configMap: string): PodRef => ({
  metadata: { uid, name: `p-${uid}`, namespace: 'kube-system' },
  spec: {
    containers: [{ name: 'c' }],
    volumes: [
      { name: 'v', configMap: { name: configMap } },
      { name: 'root-ca', projected: { sources: [{ configMap: { name: 'kube-root-ca.crt' } }] } },
    ],
  },
});

describe('pod objects on the real API client', () => {
  const dir = makeTmpDir('pod-objects');
  const api = new SmallApiServer();
  let client: ApiClient;
  let objects: ApiPodObjects;
  let conn: Connectivity;

  beforeAll(async () => {
    const pki = createPki(dir);
    const server = await api.start(pki.server.keyPem, pki.server.certPem);
    client = new ApiClient({ server, ca: Buffer.from(pki.caPem), source: 'test' });
    conn = new Connectivity(client, nullLogger);
    objects = new ApiPodObjects({ client, gate: conn, logger: nullLogger });
  });

  afterAll(async () => {
    await objects?.stop();
    conn?.stop();
    client?.close();
    await new Promise<void>((r) => api.server.close(() => r()));
    removeTmpDir(dir);
  });

  it('lists, watches and asks tokens over one HTTP/2 connection, and tells a change through the watch', async () => {
    api.putConfigMap('kube-proxy', { 'config.conf': 'v1' });
    api.putConfigMap('kube-root-ca.crt', { 'ca.crt': 'pem' });
    const changes: string[][] = [];
    objects.onChange((u) => changes.push([...u].sort()));
    objects.registerPod(pod('a', 'kube-proxy'));
    objects.registerPod(pod('b', 'kube-proxy'));
    expect((await objects.getConfigMap('kube-system', 'kube-proxy'))?.data).toEqual({ 'config.conf': 'v1' });
    expect((await objects.getConfigMap('kube-system', 'kube-root-ca.crt'))?.data).toEqual({ 'ca.crt': 'pem' });
    expect(await objects.getServices('kube-system')).toEqual([]);
    const token = await objects.getServiceAccountToken({
      pod: pod('a', 'kube-proxy'),
      serviceAccountName: 'kube-proxy',
      expirationSeconds: 3607,
    });
    expect(token.token).toBe('header.payload.sig');
    // Two ConfigMap watches and the Services watch, open; one LIST each.
    await waitFor(() => api.watchers.size === 3, { timeoutMs: 10_000, what: 'three watches open' });
    expect(api.requests.filter((r) => r.startsWith('GET') && !r.endsWith('watch')).sort()).toEqual([
      'GET /api/v1/namespaces/kube-system/configmaps',
      'GET /api/v1/namespaces/kube-system/configmaps',
      'GET /api/v1/services',
    ]);

    const changedAt = performance.now();
    api.putConfigMap('kube-proxy', { 'config.conf': 'v2' });
    await waitFor(() => changes.length > 0, { timeoutMs: 10_000, intervalMs: 1, what: 'the change told' });
    const latencyMs = performance.now() - changedAt;
    expect(changes).toEqual([['a', 'b']]);
    expect((await objects.getConfigMap('kube-system', 'kube-proxy'))?.data).toEqual({ 'config.conf': 'v2' });
    expect(api.sessions).toBe(1);
    // A figure for the README, not an assertion: the change as the watch carries it, on this box.
    console.info(`pod-objects: ConfigMap change -> onChange in ${latencyMs.toFixed(1)} ms over the real client`);
  });
});
