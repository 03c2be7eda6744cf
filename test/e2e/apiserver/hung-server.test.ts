// An API server that accepts connections and never answers: once one request has had no answer
// in time, the others in flight to it are given up at once (and sent again when it answers),
// rather than each waiting out its own deadline. Found by the soak: a lease renewal sent into a
// hung server kept the lease stale for 10 s after the server answered again.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportError } from '../../../src/apiserver/api-error.js';
import { ApiClient } from '../../../src/apiserver/client.js';
import { Connectivity } from '../../../src/apiserver/connectivity.js';
import { loadKubeconfig } from '../../../src/apiserver/kubeconfig.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
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
    await waitFor(() => api.requests.some((r) => r.path === '/api/v1/namespaces/default/pods'), { timeoutMs: 10_000, what: 'the first request to reach the server' });
    await expect(client.request('GET', '/api/v1/nodes', { timeoutMs: 300, query: { fieldSelector: 'metadata.name=n1' } })).rejects.toThrow(/no answer within 300 ms/);
    const given = await slow;
    expect(given).toBeInstanceOf(TransportError);
    expect((given as TransportError).message).toBe('GET /api/v1/namespaces/default/pods: given up, the API server is not answering');
    expect(conn.current).toBe('down');
    api.hang(false);
    await waitFor(() => conn.current === 'up', { timeoutMs: 30_000, what: 'the probe to find the server answering' });
    expect(await client.get<{ kind: string }>('/api/v1/nodes', { fieldSelector: 'metadata.name=n1' })).toMatchObject({ kind: 'NodeList' });
  });
});
