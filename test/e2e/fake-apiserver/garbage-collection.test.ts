// The garbage collector's part: deleting a Node takes its mirror pods (owner references) with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { TestClient } from './client.js';
import { mirrorPod, nodeObject, NODE_USER } from './fixtures.js';

let server: FakeApiServer;
let admin: TestClient;
let node: TestClient;

beforeAll(async () => {
  server = await startFakeApiServer();
  admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
  node = TestClient.forUser(server, NODE_USER('n1').user, NODE_USER('n1').groups);
});

afterAll(async () => {
  admin?.close();
  node?.close();
  await server?.dispose();
});

async function registerWithMirror(): Promise<string> {
  const n = await node.post('/api/v1/nodes', nodeObject('n1'));
  expect(n.status, n.text).toBe(201);
  const uid = String(n.json.metadata?.uid);
  expect((await node.post('/api/v1/namespaces/kube-system/pods', mirrorPod('etcd', 'n1', uid))).status).toBe(201);
  return uid;
}

describe('garbage collection', () => {
  it('deleting the Node gracefully deletes its mirror pods; the node finishes them', async () => {
    await registerWithMirror();
    expect((await admin.delete('/api/v1/nodes/n1')).json).toMatchObject({ kind: 'Status', status: 'Success' });
    const pod = await waitFor(
      () => {
        const p = server.object('pods', 'kube-system', 'etcd-n1');
        return p?.metadata.deletionTimestamp ? p : undefined;
      },
      {
        timeoutMs: 10_000,
        what: 'the mirror pod to get a deletionTimestamp',
      },
    );
    expect(pod.metadata.deletionGracePeriodSeconds).toBe(30);
    const r = await node.delete('/api/v1/namespaces/kube-system/pods/etcd-n1', {
      gracePeriodSeconds: 0,
      preconditions: { uid: String(pod.metadata.uid) },
    });
    expect(r.status, r.text).toBe(200);
    expect(server.object('pods', 'kube-system', 'etcd-n1')).toBeUndefined();
  });

  it('can be switched off', async () => {
    server.garbageCollection(false);
    try {
      await registerWithMirror();
      await admin.delete('/api/v1/nodes/n1');
      // A later request is served after any sweep the deletion could have scheduled.
      await admin.get('/version');
      await new Promise((r) => setImmediate(r));
      expect(server.object('pods', 'kube-system', 'etcd-n1')?.metadata.deletionTimestamp).toBeUndefined();
    } finally {
      server.garbageCollection(true);
    }
    await waitFor(() => server.object('pods', 'kube-system', 'etcd-n1')?.metadata.deletionTimestamp, {
      timeoutMs: 10_000,
      what: 'the sweep after switching it on',
    });
  });
});
