// kubectl's writing and describing commands against the fake: create/apply -f (which probe /openapi/v3
// for server-side field validation), label, cordon, describe, events.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { makeTmpDir, removeTmpDir } from '../../support/tmp.js';
import { TestClient } from './client.js';
import { mirrorPod, nodeObject, NODE_USER, runningStatus } from './fixtures.js';
import { Kubectl } from './kubectl.js';

let server: FakeApiServer;
let dir: string;
let kubectl: Kubectl;
let node: TestClient;
let nodeUid: string;

beforeAll(async () => {
  dir = makeTmpDir('fake-apiserver-kubectl-write');
  server = await startFakeApiServer();
  kubectl = new Kubectl(server.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
  node = TestClient.forUser(server, NODE_USER('n1').user, NODE_USER('n1').groups);
  nodeUid = String((await node.post('/api/v1/nodes', nodeObject('n1'))).json.metadata?.uid);
  expect((await node.post('/api/v1/namespaces/kube-system/pods', mirrorPod('etcd', 'n1', nodeUid))).status).toBe(201);
  await node.patch(
    '/api/v1/namespaces/kube-system/pods/etcd-n1/status',
    { status: runningStatus('etcd') },
    'application/strategic-merge-patch+json',
  );
  await node.post('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
    metadata: { name: 'n1' },
    spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: new Date().toISOString().replace('Z', '000Z') },
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await node.post('/api/v1/namespaces/default/events', {
    metadata: { name: 'n1.17f0' },
    involvedObject: { kind: 'Node', name: 'n1', uid: 'n1' },
    reason: 'NodeReady',
    message: 'Node n1 status is now: NodeReady',
    type: 'Normal',
    source: { component: 'kubelet', host: 'n1' },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  });
});

afterAll(async () => {
  node?.close();
  await server?.dispose();
  if (dir) removeTmpDir(dir);
});

describe('kubectl writes and describes', () => {
  it('create -f and apply -f a manifest (validation left to the server)', async () => {
    const file = join(dir, 'pod.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: fromfile\n  namespace: default\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n',
    );
    expect(await kubectl.ok(['create', '-f', file])).toBe('pod/fromfile created\n');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: fromfile\n  namespace: default\n  labels: {tier: web}\nspec:\n  containers:\n  - name: c\n    image: busybox:1.37\n',
    );
    expect(await kubectl.ok(['apply', '-f', file])).toBe('pod/fromfile configured\n');
    const pod = server.object('pods', 'default', 'fromfile');
    expect(pod?.metadata.labels).toEqual({ tier: 'web' });
    expect(JSON.stringify(pod?.spec)).toContain('busybox:1.37');
    const post = server.requests.find((r) => r.method === 'POST' && r.path === '/api/v1/namespaces/default/pods');
    expect(post?.query).toContain('fieldValidation=Strict');
  });

  it('label, annotate and cordon patch the objects', async () => {
    await kubectl.ok(['label', 'pod', '-n', 'kube-system', 'etcd-n1', 'team=infra']);
    await kubectl.ok(['annotate', 'node', 'n1', 'note=hello']);
    expect(await kubectl.ok(['cordon', 'n1'])).toBe('node/n1 cordoned\n');
    expect(server.object('pods', 'kube-system', 'etcd-n1')?.metadata.labels).toMatchObject({ team: 'infra' });
    expect(server.object('nodes', '', 'n1')?.metadata.annotations).toMatchObject({ note: 'hello' });
    expect(await kubectl.ok(['get', 'node', 'n1', '--no-headers'])).toMatch(/^n1\s+Ready,SchedulingDisabled\s+<none>/);
    await kubectl.ok(['uncordon', 'n1']);
  });

  it('describe node shows lease, conditions, pods and events; describe pod shows the owner Node', async () => {
    const dn = await kubectl.ok(['describe', 'node', 'n1']);
    expect(dn).toMatch(/HolderIdentity:\s+n1/);
    expect(dn).toMatch(/Ready\s+True/);
    expect(dn).toMatch(/kube-system\s+etcd-n1/);
    expect(dn).toMatch(/Normal\s+NodeReady\s+\S+\s+kubelet\s+Node n1 status is now: NodeReady/);
    const dp = await kubectl.ok(['describe', 'pod', '-n', 'kube-system', 'etcd-n1']);
    expect(dp).toMatch(/Controlled By:\s+Node\/n1/);
    expect(dp).toMatch(/Status:\s+Running/);
    expect(dp).toMatch(/Priority Class Name:\s+system-node-critical/);
  });

  it('get events and leases use their own table columns', async () => {
    const ev = await kubectl.ok(['get', 'events']);
    expect(ev.split('\n')[0].split(/\s{2,}/)).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
    expect(ev).toMatch(/Normal\s+NodeReady\s+node\/n1\s+Node n1 status is now: NodeReady/);
    const leases = await kubectl.ok(['get', 'leases', '-n', 'kube-node-lease']);
    expect(leases).toMatch(/^NAME\s+HOLDER\s+AGE\nn1\s+n1\s+\d+s\n$/);
  });

  it('api-resources lists what the fake serves', async () => {
    const out = await kubectl.ok(['api-resources', '--no-headers']);
    expect(out).toMatch(/^pods\s+po\s+v1\s+true\s+Pod$/m);
    expect(out).toMatch(/^nodes\s+no\s+v1\s+false\s+Node$/m);
    expect(out).toMatch(/^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m);
  });
});
