// NodeRestriction and the node authorizer as the fake enforces them for a kubelet identity.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer, type JsonObject } from '../../support/fake-apiserver/index.js';
import { TestClient } from './client.js';
import { mirrorPod, nodeObject, NODE_USER, runningStatus } from './fixtures.js';

let server: FakeApiServer;
let n1: TestClient;
let n2: TestClient;
let admin: TestClient;
let n1Uid: string;

beforeAll(async () => {
  server = await startFakeApiServer();
  n1 = TestClient.forUser(server, NODE_USER('n1').user, NODE_USER('n1').groups);
  n2 = TestClient.forUser(server, NODE_USER('n2').user, NODE_USER('n2').groups);
  admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
  const r = await n1.post('/api/v1/nodes', nodeObject('n1'));
  expect(r.status, r.text).toBe(201);
  n1Uid = String(r.json.metadata?.uid);
  expect((await n2.post('/api/v1/nodes', nodeObject('n2'))).status).toBe(201);
});

afterAll(async () => {
  for (const c of [n1, n2, admin]) c?.close();
  await server?.dispose();
});

const PODS = '/api/v1/namespaces/kube-system/pods';

async function refusedCreate(pod: JsonObject, message: string): Promise<void> {
  const r = await n1.post(PODS, pod);
  expect(r.status, r.text).toBe(403);
  expect(r.json).toMatchObject({
    kind: 'Status',
    status: 'Failure',
    reason: 'Forbidden',
    code: 403,
    message,
    details: { kind: 'pods' },
  });
}

function withMeta(p: JsonObject, m: JsonObject): JsonObject {
  return { ...p, metadata: { ...(p.metadata as JsonObject), ...m } };
}

describe('NodeRestriction: mirror pod creation', () => {
  it('lets a node create a proper mirror pod of its own', async () => {
    const r = await n1.post(PODS, mirrorPod('etcd', 'n1', n1Uid));
    expect(r.status, r.text).toBe(201);
    expect(r.json.metadata?.uid).not.toBe(n1Uid);
  });

  it('refuses a mirror pod bound to another node', async () => {
    await refusedCreate(
      mirrorPod('x', 'n2', n1Uid),
      'pods "x-n2" is forbidden: node "n1" can only create pods with spec.nodeName set to itself',
    );
  });

  it('refuses a pod without the mirror annotation', async () => {
    const p = withMeta(mirrorPod('plain', 'n1', n1Uid), { annotations: { 'kubernetes.io/config.hash': 'abc123' } });
    await refusedCreate(
      p,
      'pods "plain-n1" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    );
  });

  it('refuses a mirror pod without, or with a wrong, owner reference', async () => {
    await refusedCreate(
      withMeta(mirrorPod('noowner', 'n1', n1Uid), { ownerReferences: [] }),
      'pods "noowner-n1" is forbidden: node "n1" can only create pods with an owner reference set to itself',
    );
    await refusedCreate(
      withMeta(mirrorPod('notctl', 'n1', n1Uid), {
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: n1Uid }],
      }),
      'pods "notctl-n1" is forbidden: node "n1" can only create pods with a controller owner reference set to itself',
    );
    await refusedCreate(
      mirrorPod('baduid', 'n1', '11111111-1111-4111-8111-111111111111'),
      `pods "baduid-n1" is forbidden: node n1 UID mismatch: expected 11111111-1111-4111-8111-111111111111 got ${n1Uid}`,
    );
  });

  it('refuses mirror pods that reference secrets, configmaps, service accounts or PVCs', async () => {
    await refusedCreate(
      mirrorPod('sec', 'n1', n1Uid, { volumes: [{ name: 'v', secret: { secretName: 's' } }] }),
      'pods "sec-n1" is forbidden: node "n1" can not create pods that reference secrets',
    );
    await refusedCreate(
      mirrorPod('cm', 'n1', n1Uid, {
        containers: [
          { name: 'cm', image: 'i', env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }] },
        ],
      }),
      'pods "cm-n1" is forbidden: node "n1" can not create pods that reference configmaps',
    );
    await refusedCreate(
      mirrorPod('sa', 'n1', n1Uid, { serviceAccountName: 'default' }),
      'pods "sa-n1" is forbidden: node "n1" can not create pods that reference a service account',
    );
    await refusedCreate(
      mirrorPod('pvc', 'n1', n1Uid, { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] }),
      'pods "pvc-n1" is forbidden: node "n1" can not create pods that reference persistentvolumeclaims',
    );
  });
});

describe('NodeRestriction: pod status, update and delete', () => {
  it("refuses a status patch of another node's pod, allows its own", async () => {
    const own = await n1.post(PODS, mirrorPod('apiserver', 'n1', n1Uid));
    expect(own.status).toBe(201);
    const ok = await n1.patch(
      `${PODS}/apiserver-n1/status`,
      { status: runningStatus('apiserver') },
      'application/strategic-merge-patch+json',
    );
    expect(ok.status, ok.text).toBe(200);
    const other = await n2.patch(
      `${PODS}/apiserver-n1/status`,
      { status: { phase: 'Failed' } },
      'application/strategic-merge-patch+json',
    );
    expect(other.status).toBe(403);
    expect(other.json.message).toBe(
      'pods "apiserver-n1" is forbidden: node "n2" can only update pod status for pods with spec.nodeName set to itself',
    );
    const labels = await n1.patch(
      `${PODS}/apiserver-n1/status`,
      { metadata: { labels: { sneaky: 'yes' } } },
      'application/merge-patch+json',
    );
    expect(labels.json.message).toBe(
      'pods "apiserver-n1" is forbidden: node "n1" cannot update labels through pod status',
    );
  });

  it("refuses a node updating a pod spec (no update verb on pods) and deleting another node's pod", async () => {
    const upd = await n1.patch(
      `${PODS}/apiserver-n1`,
      { metadata: { labels: { a: 'b' } } },
      'application/merge-patch+json',
    );
    expect(upd.status).toBe(403);
    expect(upd.json.message).toBe(
      'pods "apiserver-n1" is forbidden: User "system:node:n1" cannot patch resource "pods" in API group "" in the namespace "kube-system"',
    );
    const del = await n2.delete(`${PODS}/apiserver-n1`, { gracePeriodSeconds: 0 });
    expect(del.status).toBe(403);
    expect(del.json.message).toBe(
      'pods "apiserver-n1" is forbidden: node "n2" can only delete pods with spec.nodeName set to itself',
    );
    expect((await n1.delete(`${PODS}/apiserver-n1`, { gracePeriodSeconds: 0 })).status).toBe(200);
  });
});

describe('NodeRestriction: nodes and leases', () => {
  it('a node may change only its own Node, not restricted labels or taints', async () => {
    const other = await n1.patch(
      '/api/v1/nodes/n2/status',
      { status: { phase: 'x' } },
      'application/strategic-merge-patch+json',
    );
    expect(other.status).toBe(403);
    expect(other.json.message).toBe('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    const label = await n1.patch(
      '/api/v1/nodes/n1',
      { metadata: { labels: { 'node-restriction.kubernetes.io/pool': 'a' } } },
      'application/strategic-merge-patch+json',
    );
    expect(label.json.message).toBe(
      'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool',
    );
    const role = await n1.post('/api/v1/nodes', { ...nodeObject('n3'), metadata: { name: 'n3' } });
    expect(role.json.message).toBe('nodes "n3" is forbidden: node "n1" is not allowed to modify node "n3"');
    const taints = await n1.patch(
      '/api/v1/nodes/n1',
      { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } },
      'application/merge-patch+json',
    );
    expect(taints.json.message).toBe('nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    const ok = await n1.patch(
      '/api/v1/nodes/n1',
      { metadata: { labels: { 'topology.kubernetes.io/zone': 'z1', custom: 'ok' } } },
      'application/strategic-merge-patch+json',
    );
    expect(ok.status, ok.text).toBe(200);
  });

  it('a node may hold only its own Lease in kube-node-lease', async () => {
    const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'n1' },
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z' },
    };
    const c = await n1.post(LEASES, lease);
    expect(c.status, c.text).toBe(201);
    const renew = await n1.put(`${LEASES}/n1`, {
      ...c.json,
      spec: { ...(c.json.spec as JsonObject), renewTime: '2026-01-01T00:00:10.000000Z' },
    } as never);
    expect(renew.status, renew.text).toBe(200);
    const foreign = await n2.put(`${LEASES}/n1`, renew.json as never);
    expect(foreign.json.message).toBe(
      'leases.coordination.k8s.io "n1" is forbidden: can only access node lease with the same name as the requesting node',
    );
    const elsewhere = await n1.post('/apis/coordination.k8s.io/v1/namespaces/default/leases', lease);
    expect(elsewhere.json.message).toBe(
      'leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace',
    );
  });

  it('a node may post events but not read namespaces', async () => {
    const ev = await n1.post('/api/v1/namespaces/default/events', {
      metadata: { name: 'n1.1' },
      involvedObject: { kind: 'Node', name: 'n1', uid: n1Uid },
      reason: 'NodeReady',
      message: 'Node n1 status is now: NodeReady',
      type: 'Normal',
      source: { component: 'kubelet', host: 'n1' },
    });
    expect(ev.status, ev.text).toBe(201);
    expect((await n1.get('/api/v1/namespaces')).status).toBe(403);
  });
});
