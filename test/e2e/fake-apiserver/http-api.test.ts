// Direct HTTP tests of the fake API server's REST semantics: Status errors, concurrency, subresources,
// patches, selectors, graceful deletion and watch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { TestClient } from './client.js';
import { nodeObject, runningStatus } from './fixtures.js';

let server: FakeApiServer;
let admin: TestClient;
let adminH1: TestClient;

beforeAll(async () => {
  server = await startFakeApiServer();
  admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
  adminH1 = TestClient.forUser(server, 'system:admin', ['system:masters'], 'h1');
});

afterAll(async () => {
  admin?.close();
  await server?.dispose();
});

const podsOf = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: name } },
  spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...extra },
});

describe('authentication and authorization', () => {
  it('answers 401 Unauthorized Status without credentials, over HTTP/2 and HTTP/1.1', async () => {
    for (const c of [new TestClient(server, {}, 'h2'), new TestClient(server, {}, 'h1')]) {
      const r = await c.get('/api/v1/pods');
      c.close();
      expect(r.status).toBe(401);
      expect(r.json).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
    }
  });

  it('refuses a client certificate from another CA and an unknown token', async () => {
    const other = await startFakeApiServer();
    try {
      const stranger = new TestClient(server, { cert: other.issueClientCert('system:admin', ['system:masters']) });
      expect((await stranger.get('/api/v1/pods')).status).toBe(401);
      stranger.close();
    } finally {
      await other.dispose();
    }
    const badToken = new TestClient(server, { token: 'nope' });
    expect((await badToken.get('/api/v1/pods')).status).toBe(401);
    badToken.close();
    server.addToken('good-token', 'alice', ['system:masters']);
    const goodToken = new TestClient(server, { token: 'good-token' }, 'h1');
    expect((await goodToken.get('/api/v1/pods')).status).toBe(200);
    expect(server.requests.at(-1)?.user).toBe('alice');
  });

  it('answers 403 with the RBAC message shape for a user without rights', async () => {
    const bob = TestClient.forUser(server, 'bob', ['developers']);
    const r = await bob.get('/api/v1/namespaces/default/pods/x');
    expect(r.status).toBe(403);
    expect(r.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'pods "x" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "default"',
      reason: 'Forbidden',
      details: { name: 'x', kind: 'pods' },
      code: 403,
    });
    const lease = await bob.request('PATCH', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', {
      body: {},
      contentType: 'application/merge-patch+json',
    });
    expect(lease.json.message).toBe(
      'leases.coordination.k8s.io "n1" is forbidden: User "bob" cannot patch resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease"',
    );
    expect((await bob.get('/version')).status).toBe(200);
    bob.close();
  });
});

describe('Status errors', () => {
  it('404 NotFound for a missing object, and for a create in a missing namespace', async () => {
    const r = await admin.get(`${podsOf('default')}/x`);
    expect(r.status).toBe(404);
    expect(r.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "x" not found',
      reason: 'NotFound',
      details: { name: 'x', kind: 'pods' },
      code: 404,
    });
    const c = await admin.post(podsOf('nowhere'), pod('p'));
    expect(c.status).toBe(404);
    expect(c.json.message).toBe('namespaces "nowhere" not found');
  });

  it('409 AlreadyExists on a second create', async () => {
    expect((await admin.post(podsOf('default'), pod('dup'))).status).toBe(201);
    const r = await admin.post(podsOf('default'), pod('dup'));
    expect(r.status).toBe(409);
    expect(r.json).toMatchObject({
      reason: 'AlreadyExists',
      message: 'pods "dup" already exists',
      details: { name: 'dup', kind: 'pods' },
      code: 409,
    });
  });

  it('422 Invalid with causes for bad names, no containers, a container without image', async () => {
    const noName = await admin.post(podsOf('default'), {
      metadata: {},
      spec: { containers: [{ name: 'c', image: 'i' }] },
    });
    expect(noName.status).toBe(422);
    expect(noName.json).toMatchObject({
      reason: 'Invalid',
      message: 'Pod "" is invalid: metadata.name: Required value: name or generateName is required',
      details: {
        kind: 'Pod',
        causes: [
          {
            reason: 'FieldValueRequired',
            message: 'Required value: name or generateName is required',
            field: 'metadata.name',
          },
        ],
      },
    });
    const badName = await admin.post(podsOf('default'), pod('Bad_Name'));
    expect(badName.status).toBe(422);
    expect(String(badName.json.message)).toMatch(
      /^Pod "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    const empty = await admin.post(podsOf('default'), { metadata: { name: 'empty' }, spec: { containers: [] } });
    expect(empty.json).toMatchObject({ code: 422, message: 'Pod "empty" is invalid: spec.containers: Required value' });
    const noImage = await admin.post(podsOf('default'), {
      metadata: { name: 'noimg' },
      spec: { containers: [{ name: 'c' }] },
    });
    expect(noImage.json).toMatchObject({
      code: 422,
      message: 'Pod "noimg" is invalid: spec.containers[0].image: Required value',
      details: {
        name: 'noimg',
        kind: 'Pod',
        causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[0].image' }],
      },
    });
  });

  it('500 without a reason for a create that carries a resourceVersion; 400 for dryRun', async () => {
    const r = await admin.post(podsOf('default'), {
      ...pod('with-rv'),
      metadata: { name: 'with-rv', resourceVersion: '5' },
    });
    expect(r.status).toBe(500);
    expect(r.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'resourceVersion should not be set on objects to be created',
      code: 500,
    });
    const dry = await admin.request('POST', `${podsOf('default')}?dryRun=All`, { body: pod('dry') });
    expect(dry.status).toBe(400);
    expect(server.object('pods', 'default', 'dry')).toBeUndefined();
  });

  it('generateName gets a random suffix', async () => {
    const r = await admin.post(podsOf('default'), {
      metadata: { generateName: 'gen-' },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    });
    expect(r.status).toBe(201);
    expect(String(r.json.metadata?.name)).toMatch(/^gen-[a-z0-9]{5}$/);
  });
});

describe('optimistic concurrency and preconditions', () => {
  it('409 Conflict on a PUT with a stale resourceVersion', async () => {
    const created = await admin.post(podsOf('default'), pod('occ'));
    const stale = created.json;
    const first = await admin.put(`${podsOf('default')}/occ`, {
      ...stale,
      metadata: { ...stale.metadata, labels: { v: '1' } },
    } as never);
    expect(first.status).toBe(200);
    expect(Number(first.json.metadata?.resourceVersion)).toBeGreaterThan(Number(stale.metadata?.resourceVersion));
    const second = await admin.put(`${podsOf('default')}/occ`, {
      ...stale,
      metadata: { ...stale.metadata, labels: { v: '2' } },
    } as never);
    expect(second.status).toBe(409);
    expect(second.json).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on pods "occ": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'occ', kind: 'pods' },
      code: 409,
    });
  });

  it('409 Conflict on a DELETE whose UID precondition does not match', async () => {
    const created = await admin.post(podsOf('default'), pod('uidpre'));
    const uid = String(created.json.metadata?.uid);
    const r = await admin.delete(`${podsOf('default')}/uidpre`, { preconditions: { uid: 'not-the-uid' } });
    expect(r.status).toBe(409);
    expect(r.json.message).toBe(
      `Operation cannot be fulfilled on pods "uidpre": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${uid}`,
    );
    const rv = await admin.delete(`${podsOf('default')}/uidpre`, { preconditions: { resourceVersion: '1' } });
    expect(rv.status).toBe(409);
    expect(String(rv.json.message)).toContain(
      'Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta:',
    );
    expect((await admin.delete(`${podsOf('default')}/uidpre`, { preconditions: { uid } })).status).toBe(200);
  });

  it('assigns RFC 4122 UIDs, creation timestamps, generation and a global increasing resourceVersion', async () => {
    const a = await admin.post(podsOf('default'), pod('meta-a'));
    const b = await admin.post('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
      metadata: { name: 'meta-b' },
      spec: { holderIdentity: 'x' },
    });
    expect(String(a.json.metadata?.uid)).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(String(a.json.metadata?.creationTimestamp)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(a.json.metadata?.generation).toBe(1);
    expect(Number(b.json.metadata?.resourceVersion)).toBeGreaterThan(Number(a.json.metadata?.resourceVersion));
    expect(b.json).toMatchObject({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' });
    expect(a.json).toMatchObject({
      status: { phase: 'Pending', qosClass: 'BestEffort' },
      spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 30 },
    });
  });
});

describe('status subresource', () => {
  it('a main-resource PUT ignores status; a status PUT changes only status', async () => {
    const created = await admin.post(podsOf('default'), pod('sub', { nodeName: 'n9' }));
    const body = created.json as Record<string, unknown> & { metadata: Record<string, unknown> };
    const main = await admin.put(`${podsOf('default')}/sub`, {
      ...body,
      metadata: { ...body.metadata, labels: { app: 'sub', x: 'y' } },
      status: { phase: 'Running' },
    } as never);
    expect(main.status).toBe(200);
    expect(main.json).toMatchObject({ metadata: { labels: { x: 'y' } }, status: { phase: 'Pending' } });
    const st = await admin.put(`${podsOf('default')}/sub/status`, {
      ...main.json,
      spec: { ...(main.json.spec as object), activeDeadlineSeconds: 5 },
      status: runningStatus('c'),
    } as never);
    expect(st.status, st.text).toBe(200);
    expect(st.json).toMatchObject({ status: { phase: 'Running' } });
    expect((st.json.spec as Record<string, unknown>).activeDeadlineSeconds).toBeUndefined();
    const got = await admin.get(`${podsOf('default')}/sub/status`);
    expect(got.json).toMatchObject({ kind: 'Pod', status: { phase: 'Running' } });
  });

  it('nodes: status kept on create, ignored by main-resource patches, changed by status patches', async () => {
    const c = await admin.post('/api/v1/nodes', nodeObject('status-node', false));
    expect(c.status).toBe(201);
    const main = await admin.patch(
      '/api/v1/nodes/status-node',
      { metadata: { labels: { a: 'b' } }, status: { phase: 'x' } },
      'application/merge-patch+json',
    );
    expect(main.json).toMatchObject({ metadata: { labels: { a: 'b' } } });
    expect((main.json.status as Record<string, unknown>).phase).toBeUndefined();
    const st = await admin.patch(
      '/api/v1/nodes/status-node/status',
      { metadata: { labels: { c: 'd' } }, spec: { unschedulable: true }, status: { phase: 'y' } },
      'application/merge-patch+json',
    );
    expect(st.json).toMatchObject({ status: { phase: 'y' } });
    expect((st.json.spec as Record<string, unknown>).unschedulable).toBeUndefined();
  });

  it('a no-op write keeps the resourceVersion', async () => {
    const c = await admin.post(podsOf('default'), pod('noop'));
    const p = await admin.patch(
      `${podsOf('default')}/noop`,
      { metadata: { labels: { app: 'noop' } } },
      'application/merge-patch+json',
    );
    expect(p.json.metadata?.resourceVersion).toBe(c.json.metadata?.resourceVersion);
  });
});

describe('patches', () => {
  it('merge patch: maps merge, null deletes, lists replace', async () => {
    await admin.post(podsOf('default'), {
      metadata: { name: 'mp', labels: { a: '1', b: '2' }, annotations: { k: 'v' } },
      spec: { containers: [{ name: 'c', image: 'i:1' }] },
    });
    const r = await admin.patch(
      `${podsOf('default')}/mp`,
      { metadata: { labels: { b: null, c: '3' } }, spec: { containers: [{ name: 'c', image: 'i:2' }] } },
      'application/merge-patch+json',
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.metadata?.labels).toEqual({ a: '1', c: '3' });
    expect(r.json.metadata?.annotations).toEqual({ k: 'v' });
    expect(r.json.spec).toMatchObject({ containers: [{ name: 'c', image: 'i:2' }] });
    expect(r.json.metadata?.generation).toBe(2);
  });

  it('strategic merge patch of pod status as a kubelet sends it: conditions by type, $setElementOrder, containerStatuses atomic', async () => {
    const c = await admin.post(
      podsOf('default'),
      pod('smp', {
        nodeName: 'n1',
        containers: [
          { name: 'a', image: 'i' },
          { name: 'b', image: 'i' },
        ],
      }),
    );
    const uid = String(c.json.metadata?.uid);
    const first = await admin.patch(
      `${podsOf('default')}/smp/status`,
      {
        metadata: { uid },
        status: {
          phase: 'Running',
          conditions: [
            { type: 'PodScheduled', status: 'True' },
            { type: 'Ready', status: 'False', reason: 'ContainersNotReady' },
            { type: 'DisruptionTarget', status: 'True' },
          ],
          containerStatuses: [
            { name: 'a', ready: false, restartCount: 0 },
            { name: 'b', ready: false, restartCount: 0 },
          ],
        },
      },
      'application/strategic-merge-patch+json',
    );
    expect(first.status, first.text).toBe(200);
    const second = await admin.patch(
      `${podsOf('default')}/smp/status`,
      {
        metadata: { uid },
        status: {
          $setElementOrder: undefined,
          '$setElementOrder/conditions': [{ type: 'Initialized' }, { type: 'Ready' }, { type: 'PodScheduled' }],
          conditions: [
            { type: 'Initialized', status: 'True' },
            { type: 'Ready', status: 'True', reason: null },
          ],
          containerStatuses: [{ name: 'b', ready: true, restartCount: 1 }],
        },
      } as never,
      'application/strategic-merge-patch+json',
    );
    expect(second.status, second.text).toBe(200);
    const status = second.json.status as {
      conditions: Record<string, unknown>[];
      containerStatuses: Record<string, unknown>[];
      phase: string;
    };
    expect(status.phase).toBe('Running');
    expect(status.conditions).toEqual([
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
      { type: 'DisruptionTarget', status: 'True' },
    ]);
    expect(status.containerStatuses).toEqual([{ name: 'b', ready: true, restartCount: 1 }]);
  });

  it('strategic merge patch of a pod with a different UID is refused', async () => {
    await admin.post(podsOf('default'), pod('smp-uid', { nodeName: 'n1' }));
    const r = await admin.patch(
      `${podsOf('default')}/smp-uid/status`,
      { metadata: { uid: '00000000-0000-4000-8000-000000000000' }, status: { phase: 'Running' } },
      'application/strategic-merge-patch+json',
    );
    expect(r.status).toBe(422);
    expect(String(r.json.message)).toContain(
      'metadata.uid: Invalid value: "00000000-0000-4000-8000-000000000000": field is immutable',
    );
  });

  it('strategic merge patch of node status: conditions and addresses by type, labels as a map', async () => {
    await admin.post('/api/v1/nodes', nodeObject('smp-node', false));
    const r = await admin.patch(
      '/api/v1/nodes/smp-node/status',
      {
        metadata: { labels: { 'kubernetes.io/os': null, extra: 'x' } },
        status: {
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
          addresses: [
            { type: 'InternalIP', address: '10.0.0.8' },
            { type: 'ExternalIP', address: '1.2.3.4' },
          ],
        },
      },
      'application/strategic-merge-patch+json',
    );
    expect(r.status, r.text).toBe(200);
    const status = r.json.status as { conditions: Record<string, unknown>[]; addresses: Record<string, unknown>[] };
    expect(status.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
    expect(status.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.8' },
      { type: 'Hostname', address: 'smp-node' },
      { type: 'ExternalIP', address: '1.2.3.4' },
    ]);
    expect(r.json.metadata?.labels).toEqual({
      'kubernetes.io/hostname': 'smp-node',
      'kubernetes.io/arch': 'amd64',
      extra: 'x',
    });
  });

  it('JSON patch, and 415 for an unknown patch type', async () => {
    await admin.post(podsOf('default'), pod('jp'));
    const r = await admin.patch(
      `${podsOf('default')}/jp`,
      [
        { op: 'add', path: '/metadata/annotations', value: { 'a/b': '1' } },
        { op: 'replace', path: '/metadata/labels/app', value: 'changed' },
        { op: 'test', path: '/spec/containers/0/name', value: 'c' },
      ],
      'application/json-patch+json',
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.metadata).toMatchObject({ annotations: { 'a/b': '1' }, labels: { app: 'changed' } });
    const bad = await admin.patch(`${podsOf('default')}/jp`, {}, 'application/x-unknown');
    expect(bad.status).toBe(415);
    expect(bad.json.reason).toBe('UnsupportedMediaType');
  });
});

describe('lists and selectors', () => {
  it('filters by label selector and the field selectors kubelets use; refuses unknown fields', async () => {
    await admin.post('/api/v1/namespaces', { metadata: { name: 'sel' } });
    await admin.post(podsOf('sel'), pod('s1', { nodeName: 'na' }));
    await admin.post(podsOf('sel'), pod('s2', { nodeName: 'nb' }));
    const names = async (q: string): Promise<string[]> => {
      const r = await admin.get(`/api/v1/pods?${q}`);
      expect(r.status, r.text).toBe(200);
      return (r.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name);
    };
    expect(await names(`fieldSelector=${encodeURIComponent('spec.nodeName=na')}`)).toEqual(['s1']);
    expect(await names(`fieldSelector=${encodeURIComponent('metadata.namespace=sel,metadata.name!=s1')}`)).toEqual([
      's2',
    ]);
    expect(await names(`labelSelector=${encodeURIComponent('app in (s1,s2),app!=s2')}`)).toEqual(['s1']);
    const list = await admin.get(`${podsOf('sel')}`);
    expect(list.json).toMatchObject({
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: expect.any(String) },
    });
    expect((list.json.items as Record<string, unknown>[])[0].kind).toBeUndefined();
    const bad = await admin.get(`/api/v1/pods?fieldSelector=${encodeURIComponent('spec.bogus=x')}`);
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe('field label not supported: spec.bogus');
  });

  it('pages with limit and continue; serves HTTP/1.1 too', async () => {
    const first = await adminH1.get('/api/v1/namespaces?limit=2');
    expect(first.status).toBe(200);
    expect((first.json.items as unknown[]).length).toBe(2);
    const cont = String((first.json.metadata as Record<string, unknown>).continue);
    const rest = await adminH1.get(`/api/v1/namespaces?limit=100&continue=${encodeURIComponent(cont)}`);
    expect((rest.json.items as unknown[]).length).toBeGreaterThan(0);
  });
});

describe('graceful deletion', () => {
  it('a pod bound to a node gets a deletionTimestamp and stays until a grace-0 delete; watch sees MODIFIED then DELETED', async () => {
    const c = await admin.post(podsOf('default'), pod('grace', { nodeName: 'n1', terminationGracePeriodSeconds: 45 }));
    const watch = admin.watch(
      `${podsOf('default')}?watch=1&resourceVersion=${String(c.json.metadata?.resourceVersion)}&fieldSelector=${encodeURIComponent('metadata.name=grace')}`,
    );
    try {
      const d1 = await admin.delete(`${podsOf('default')}/grace`);
      expect(d1.status).toBe(200);
      expect(d1.json).toMatchObject({
        kind: 'Pod',
        metadata: { deletionGracePeriodSeconds: 45, deletionTimestamp: expect.any(String) },
      });
      const longer = await admin.delete(`${podsOf('default')}/grace`, { gracePeriodSeconds: 100 });
      expect(longer.json.metadata?.deletionGracePeriodSeconds).toBe(45);
      const shorter = await admin.delete(`${podsOf('default')}/grace`, { gracePeriodSeconds: 10 });
      expect(shorter.json.metadata?.deletionGracePeriodSeconds).toBe(10);
      expect(server.object('pods', 'default', 'grace')).toBeDefined();
      const d2 = await admin.delete(`${podsOf('default')}/grace`, {
        gracePeriodSeconds: 0,
        preconditions: { uid: String(c.json.metadata?.uid) },
      });
      expect(d2.status).toBe(200);
      expect(server.object('pods', 'default', 'grace')).toBeUndefined();
      await waitFor(() => watch.events.some((e) => e.type === 'DELETED'), { timeoutMs: 10_000, what: 'DELETED' });
      expect(watch.events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'DELETED']);
    } finally {
      watch.close();
    }
  });

  it('an unbound pod goes at once; other kinds answer a Success Status', async () => {
    await admin.post(podsOf('default'), pod('unbound'));
    const d = await admin.delete(`${podsOf('default')}/unbound`);
    expect(d.json).toMatchObject({ kind: 'Pod', metadata: { name: 'unbound' } });
    expect(server.object('pods', 'default', 'unbound')).toBeUndefined();
    await admin.post('/apis/coordination.k8s.io/v1/namespaces/default/leases', { metadata: { name: 'l' }, spec: {} });
    const dl = await admin.delete('/apis/coordination.k8s.io/v1/namespaces/default/leases/l');
    expect(dl.json).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'l', group: 'coordination.k8s.io', kind: 'leases' },
    });
  });
});

describe('watch', () => {
  it('from a resourceVersion delivers only later events, in order', async () => {
    const a = await admin.post(podsOf('default'), pod('w-a'));
    const rv = String(a.json.metadata?.resourceVersion);
    await admin.post(podsOf('default'), pod('w-b'));
    await admin.patch(
      `${podsOf('default')}/w-a`,
      { metadata: { labels: { seen: 'yes' } } },
      'application/merge-patch+json',
    );
    const watch = admin.watch(`${podsOf('default')}?watch=1&resourceVersion=${rv}`);
    try {
      await waitFor(() => watch.events.length >= 2, { timeoutMs: 10_000, what: 'backlog events' });
      await admin.delete(`${podsOf('default')}/w-b`);
      await waitFor(() => watch.events.length >= 3, { timeoutMs: 10_000, what: 'the live DELETED' });
      expect(watch.events.map((e) => [e.type, e.object.metadata?.name])).toEqual([
        ['ADDED', 'w-b'],
        ['MODIFIED', 'w-a'],
        ['DELETED', 'w-b'],
      ]);
      const rvs = watch.events.map((e) => Number(e.object.metadata?.resourceVersion));
      expect([...rvs].sort((x, y) => x - y)).toEqual(rvs);
    } finally {
      watch.close();
    }
  });

  it('a selector watch sees an object leave the selection as DELETED; initial events end with a bookmark', async () => {
    await admin.post(podsOf('default'), pod('w-sel'));
    const watch = admin.watch(
      `${podsOf('default')}?watch=1&labelSelector=app%3Dw-sel&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`,
    );
    try {
      await waitFor(() => watch.events.some((e) => e.type === 'BOOKMARK'), {
        timeoutMs: 10_000,
        what: 'the initial-events-end bookmark',
      });
      expect(watch.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'w-sel' } } });
      expect(watch.events[1]).toMatchObject({
        type: 'BOOKMARK',
        object: { kind: 'Pod', metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } },
      });
      await admin.patch(
        `${podsOf('default')}/w-sel`,
        { metadata: { labels: { app: 'other' } } },
        'application/merge-patch+json',
      );
      await waitFor(() => watch.events.some((e) => e.type === 'DELETED'), {
        timeoutMs: 10_000,
        what: 'DELETED on leaving the selector',
      });
    } finally {
      watch.close();
    }
  });

  it('answers 410 Expired (in an ERROR event) for a resourceVersion older than the kept history', async () => {
    const start = await admin.post(podsOf('default'), pod('w-old'));
    const oldRv = String(start.json.metadata?.resourceVersion);
    for (let i = 0; i < 1005; i++)
      server.seedObject('events', { metadata: { name: `e${i}`, namespace: 'default' }, reason: 'Filler' });
    const watch = admin.watch(`${podsOf('default')}?watch=1&resourceVersion=${oldRv}`);
    try {
      await waitFor(() => watch.ended && watch.events.length > 0, {
        timeoutMs: 10_000,
        what: 'the ERROR event and end of stream',
      });
      expect(watch.status).toBe(200);
      expect(watch.events).toEqual([
        {
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: expect.stringMatching(new RegExp(`^too old resource version: ${oldRv} \\(\\d+\\)$`)),
            reason: 'Expired',
            code: 410,
          },
        },
      ]);
    } finally {
      watch.close();
    }
  });
});
