// rest_client_requests_total as client-go counts it: every request of every client, by status
// code (or <error> when no answer came), method and host.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/apiserver/client/client.js';
import { loadKubeconfig } from '../../../src/apiserver/client/kubeconfig.js';
import { registerRequestResult } from '../../../src/apiserver/client/request-metrics.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { useTmpDir } from '../../support/tmp.js';

const dir = useTmpDir('request-metrics');
let api: FakeApiServer;
let kubeconfig: string;

beforeAll(async () => {
  api = await startFakeApiServer();
  kubeconfig = api.writeKubeconfig(join(dir, 'node.kubeconfig'), 'system:node:n1', ['system:nodes']);
});
afterAll(async () => {
  registerRequestResult(undefined);
  await api?.dispose();
});

describe('API request results', () => {
  it('are counted by code, method and host for answers and for requests that got none', async () => {
    const seen: string[] = [];
    registerRequestResult((code, method, host) => seen.push(`${code} ${method} ${host}`));
    const conn = loadKubeconfig(kubeconfig);
    const host = new URL(conn.server).host;
    const client = new ApiClient(conn, { timeoutMs: 5000 });
    await client.get('/api/v1/nodes/n1').catch(() => undefined);
    await client.get('/api/v1/namespaces/default/pods', { fieldSelector: 'spec.nodeName=n1' });
    client.close();
    const dead = new ApiClient({ ...conn, server: 'https://127.0.0.1:1' }, { timeoutMs: 2000 });
    await dead.get('/version').catch(() => undefined);
    dead.close();
    expect(seen).toEqual([`404 GET ${host}`, `200 GET ${host}`, '<error> GET 127.0.0.1:1']);
  });
});
