// An API server that accepts connections and never answers: once one request has had no answer
// in time, the others in flight to it are given up at once (and sent again when it answers),
// rather than each waiting out its own deadline. Found by the soak: a lease renewal sent into a
// hung server kept the lease stale for 10 s after the server answered again. While it hangs, the
// node's probes cost it at most two connections at a time and a handshake on a back-off (it was up
// to six connections and a handshake every 1.2 s), and the node is back within a few seconds of
// the server answering again.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportError } from '../../../src/apiserver/client/api-error.js';
import { ApiClient } from '../../../src/apiserver/client/client.js';
import { Connectivity } from '../../../src/apiserver/client/connectivity.js';
import { loadKubeconfig } from '../../../src/apiserver/client/kubeconfig.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { startFakeApiServer, type ConnectionRecord, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { connectionsOf, mostOpenAtOnce } from '../../support/fake-apiserver/connection-counts.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

const dir = useTmpDir('hung-server');
let api: FakeApiServer;
let client: ApiClient;
let conn: Connectivity;

beforeAll(async () => {
  api = await startFakeApiServer();
  const kubeconfig = api.writeKubeconfig(join(dir, 'node.kubeconfig'), 'system:node:n1', ['system:nodes']);
  client = new ApiClient(loadKubeconfig(kubeconfig), { timeoutMs: 60_000 });
  conn = new Connectivity(client, memoryLogger(2).logger);
});

afterAll(async () => {
  conn?.stop();
  client?.close();
  await api?.dispose();
});

describe('a hung API server', () => {
  it('gives up every request in flight once one gets no answer in time, and works again when the server does', async () => {
    await client.get('/api/v1/nodes', { fieldSelector: 'metadata.name=n1' });
    api.hang(true);
    // A request with the client's own (long) deadline, then one with a short one.
    const slow = client.get('/api/v1/namespaces/default/pods').then(
      () => undefined,
      (e: unknown) => e,
    );
    await waitFor(() => api.requests.some((r) => r.path === '/api/v1/namespaces/default/pods'), {
      timeoutMs: 10_000,
      what: 'the first request to reach the server',
    });
    await expect(
      client.request('GET', '/api/v1/nodes', { timeoutMs: 300, query: { fieldSelector: 'metadata.name=n1' } }),
    ).rejects.toThrow(/no answer within 300 ms/);
    const given = await slow;
    expect(given).toBeInstanceOf(TransportError);
    expect((given as TransportError).message).toBe(
      'GET /api/v1/namespaces/default/pods: given up, the API server is not answering',
    );
    expect(conn.current).toBe('down');
    api.hang(false);
    await waitFor(() => conn.current === 'up', { timeoutMs: 30_000, what: 'the probe to find the server answering' });
    expect(await client.get<{ kind: string }>('/api/v1/nodes', { fieldSelector: 'metadata.name=n1' })).toMatchObject({
      kind: 'NodeList',
    });
  });

  it('costs at most two connections at a time and a handshake on a back-off while it hangs, and the node is back soon after it answers', async () => {
    // A node of its own (its client certificate tells its connections apart from the test above).
    const kubeconfig = api.writeKubeconfig(join(dir, 'n2.kubeconfig'), 'system:node:n2', ['system:nodes']);
    const n2 = new ApiClient(loadKubeconfig(kubeconfig));
    const n2conn = new Connectivity(n2, memoryLogger(2).logger);
    try {
      await n2.get('/api/v1/nodes', { fieldSelector: 'metadata.name=n2' });
      const mine = (): ConnectionRecord[] => connectionsOf(api, 'system:node:n2');
      expect(mine()).toHaveLength(1);
      const watch = n2.watch('/api/v1/pods', { fieldSelector: 'spec.nodeName=n2', timeoutSeconds: 300 }, () => {});
      watch.done.catch(() => undefined);
      api.hang(true);
      const hungAt = performance.now();
      // The first request with no answer in time takes the node down (and its connection with it).
      await expect(n2.request('GET', '/api/v1/nodes/n2', { timeoutMs: 500 })).rejects.toThrow(
        /no answer within 500 ms/,
      );
      expect(n2conn.current).toBe('down');
      // Ten seconds of hang, counted at the server.
      await waitFor(() => performance.now() - hungAt >= 10_000, {
        timeoutMs: 20_000,
        intervalMs: 100,
        what: '10 s of hang',
      });
      const during = mine().filter((c) => c.openedAt >= hungAt);
      console.log(
        `10 s hung: ${during.length} new connections, at ${during.map((c) => ((c.openedAt - hungAt) / 1000).toFixed(1)).join(', ')} s; at most ${mostOpenAtOnce(mine())} open at once; ${api.requests.filter((r) => r.user === 'system:node:n2' && r.path === '/readyz').length} probes`,
      );
      expect(mostOpenAtOnce(mine())).toBeLessThanOrEqual(2);
      // The first after the old one was reset, then fresh ones 2 and 4 s apart (and later 8, 16).
      expect(during.length).toBeGreaterThanOrEqual(1);
      expect(during.length).toBeLessThanOrEqual(4);
      api.hang(false);
      const answeringAt = performance.now();
      await waitFor(() => n2conn.current === 'up', { timeoutMs: 15_000, what: 'the node to see the server answering' });
      console.log(`back ${Math.round(performance.now() - answeringAt)} ms after the server answered again`);
      expect(await n2.get<{ kind: string }>('/api/v1/nodes', { fieldSelector: 'metadata.name=n2' })).toMatchObject({
        kind: 'NodeList',
      });
      expect(mostOpenAtOnce(mine())).toBeLessThanOrEqual(2);
      watch.stop();
    } finally {
      n2conn.stop();
      n2.close();
    }
  });
});
