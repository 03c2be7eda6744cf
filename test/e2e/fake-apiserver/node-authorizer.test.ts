// The Node authorizer's graph rules for a kubelet identity: the secrets, configmaps and service
// account tokens of the pods bound to the node, one object at a time; pods only through the
// spec.nodeName field selector and its own Node only (AuthorizeNodeWithSelectors); services for
// everyone; the real server's Forbidden wording for the rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer, type JsonObject } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { TestClient } from './client.js';
import { nodeObject, NODE_USER } from './fixtures.js';

let server: FakeApiServer;
let n1: TestClient;
let admin: TestClient;
let proxyUid: string;
let theirsUid: string;

const NS = '/api/v1/namespaces/kube-system';

function pod(
  name: string,
  node: string,
  sa: string,
  spec: JsonObject,
  annotations: Record<string, string> = {},
): JsonObject {
  return {
    metadata: { name, namespace: 'kube-system', annotations },
    spec: {
      nodeName: node,
      serviceAccountName: sa,
      containers: [{ name: 'c', image: 'i:1', ...spec }],
      ...(spec.pod as JsonObject),
    },
  };
}

function forbidden(verb: string, resource: string, name: string, reason: string, ns = 'kube-system'): string {
  const what = name ? `${resource.split('/')[0]} "${name}" is forbidden` : `${resource.split('/')[0]} is forbidden`;
  const scope = ns ? `in the namespace "${ns}"` : 'at the cluster scope';
  return `${what}: User "system:node:n1" cannot ${verb} resource "${resource}" in API group "" ${scope}${reason ? `: ${reason}` : ''}`;
}

async function expectForbidden(
  p: Promise<{ status: number; json: Record<string, unknown> }>,
  message: string,
): Promise<void> {
  const r = await p;
  expect(r.status).toBe(403);
  expect(r.json).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403, message });
}

beforeAll(async () => {
  server = await startFakeApiServer();
  n1 = TestClient.forUser(server, NODE_USER('n1').user, NODE_USER('n1').groups);
  admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
  server.seedObject('nodes', nodeObject('n1') as never);
  server.seedObject('nodes', nodeObject('n2') as never);
  for (const name of ['env-secret', 'proj-secret', 'vol-secret', 'pull', 'theirs', 'mirror-secret', 'unused'])
    expect((await admin.post(`${NS}/secrets`, { metadata: { name }, stringData: { k: name } })).status).toBe(201);
  for (const name of ['kube-proxy', 'envfrom-cm', 'key-cm'])
    expect((await admin.post(`${NS}/configmaps`, { metadata: { name }, data: { k: name } })).status).toBe(201);
  expect((await admin.post(`${NS}/serviceaccounts`, { metadata: { name: 'kube-proxy' } })).status).toBe(201);
  proxyUid = String(
    server.seedObject(
      'pods',
      pod('kube-proxy-n1', 'n1', 'kube-proxy', {
        env: [
          { name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } },
          { name: 'B', valueFrom: { configMapKeyRef: { name: 'key-cm', key: 'k' } } },
        ],
        envFrom: [{ configMapRef: { name: 'envfrom-cm' } }],
        pod: {
          imagePullSecrets: [{ name: 'pull' }],
          volumes: [
            { name: 'cfg', configMap: { name: 'kube-proxy' } },
            { name: 'sec', secret: { secretName: 'vol-secret' } },
            {
              name: 'kube-api-access',
              projected: {
                sources: [
                  { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
                  { configMap: { name: 'kube-root-ca.crt' } },
                  { secret: { name: 'proj-secret' } },
                ],
              },
            },
          ],
        },
      }) as never,
    ).metadata.uid,
  );
  theirsUid = String(
    server.seedObject(
      'pods',
      pod('theirs', 'n2', 'kube-proxy', {
        pod: { volumes: [{ name: 's', secret: { secretName: 'theirs' } }] },
      }) as never,
    ).metadata.uid,
  );
  // A mirror pod gives its node nothing (the graph short-circuits it), whatever it names.
  server.seedObject(
    'pods',
    pod(
      'static-n1',
      'n1',
      '',
      { pod: { volumes: [{ name: 's', secret: { secretName: 'mirror-secret' } }] } },
      { 'kubernetes.io/config.mirror': 'x' },
    ) as never,
  );
});

afterAll(async () => {
  for (const c of [n1, admin]) c?.close();
  await server?.dispose();
});

describe('secrets and configmaps', () => {
  it('lets a node get what a pod bound to it refers to (volume, projected source, env, envFrom, imagePullSecrets)', async () => {
    for (const name of ['env-secret', 'proj-secret', 'vol-secret', 'pull']) {
      const r = await n1.get(`${NS}/secrets/${name}`);
      expect(r.status, name).toBe(200);
      expect(r.json.data).toEqual({ k: Buffer.from(name).toString('base64') });
    }
    for (const name of ['kube-proxy', 'envfrom-cm', 'key-cm', 'kube-root-ca.crt'])
      expect((await n1.get(`${NS}/configmaps/${name}`)).status, name).toBe(200);
  });

  it("refuses what no pod of the node refers to, a mirror pod's references, and anything but reads", async () => {
    const noPath = "no relationship found between node 'n1' and this object";
    await expectForbidden(n1.get(`${NS}/secrets/theirs`), forbidden('get', 'secrets', 'theirs', noPath));
    await expectForbidden(n1.get(`${NS}/secrets/mirror-secret`), forbidden('get', 'secrets', 'mirror-secret', noPath));
    await expectForbidden(n1.get(`${NS}/configmaps/unrelated`), forbidden('get', 'configmaps', 'unrelated', noPath));
    await expectForbidden(
      n1.get('/api/v1/namespaces/default/secrets/env-secret'),
      forbidden('get', 'secrets', 'env-secret', noPath, 'default'),
    );
    await expectForbidden(
      n1.post(`${NS}/secrets`, { metadata: { name: 'mine' } }),
      forbidden('create', 'secrets', '', 'can only read resources of this type'),
    );
    await expectForbidden(
      n1.patch(`${NS}/configmaps/kube-proxy`, { data: { k: 'x' } }, 'application/merge-patch+json'),
      forbidden('patch', 'configmaps', 'kube-proxy', 'can only read resources of this type'),
    );
    await expectForbidden(n1.get(`${NS}/secrets`), forbidden('list', 'secrets', '', 'No Object name found'));
    await expectForbidden(
      n1.get('/api/v1/secrets?fieldSelector=metadata.name%3Denv-secret'),
      `secrets "env-secret" is forbidden: User "system:node:n1" cannot list resource "secrets" in API group "" at the cluster scope: can only read namespaced object of this type`,
    );
  });

  it("lists and watches one related object by fieldSelector metadata.name, as the kubelet's per-object watch does", async () => {
    const list = await n1.get(`${NS}/secrets?fieldSelector=metadata.name%3Dvol-secret`);
    expect(list.status, list.text).toBe(200);
    expect((list.json.items as JsonObject[]).map((i) => (i.metadata as JsonObject).name)).toEqual(['vol-secret']);
    const rv = String(list.json.metadata?.resourceVersion);
    const w = n1.watch(`${NS}/configmaps?fieldSelector=metadata.name%3Dkube-proxy&watch=true&allowWatchBookmarks=true`);
    const s = n1.watch(`${NS}/secrets?fieldSelector=metadata.name%3Dvol-secret&watch=true&resourceVersion=${rv}`);
    try {
      await waitFor(() => w.events.some((e) => e.type === 'ADDED'), { timeoutMs: 5000, what: 'configmap ADDED' });
      expect(
        (await admin.patch(`${NS}/configmaps/kube-proxy`, { data: { k: 'new' } }, 'application/merge-patch+json'))
          .status,
      ).toBe(200);
      expect(
        (
          await admin.patch(
            `${NS}/secrets/vol-secret`,
            { stringData: { k: 'rotated' } },
            'application/merge-patch+json',
          )
        ).status,
      ).toBe(200);
      await waitFor(() => w.events.some((e) => e.type === 'MODIFIED' && (e.object.data as JsonObject).k === 'new'), {
        timeoutMs: 5000,
        what: 'configmap MODIFIED',
      });
      await waitFor(
        () =>
          s.events.some(
            (e) =>
              e.type === 'MODIFIED' && (e.object.data as JsonObject).k === Buffer.from('rotated').toString('base64'),
          ),
        { timeoutMs: 5000, what: 'secret MODIFIED' },
      );
      expect(w.status).toBe(200);
    } finally {
      w.close();
      s.close();
    }
    const refused = await n1.get(`${NS}/secrets?fieldSelector=metadata.name%3Dtheirs&watch=true`);
    expect(refused.status).toBe(403);
    expect(refused.json.message).toBe(
      forbidden('watch', 'secrets', 'theirs', "no relationship found between node 'n1' and this object"),
    );
  });

  it('follows the pods: a reference is gone with the pod that made it', async () => {
    server.seedObject(
      'pods',
      pod('later', 'n1', 'default', { pod: { volumes: [{ name: 's', secret: { secretName: 'unused' } }] } }) as never,
    );
    expect((await n1.get(`${NS}/secrets/unused`)).status).toBe(200);
    server.store.remove('pods', 'kube-system', 'later');
    expect((await n1.get(`${NS}/secrets/unused`)).status).toBe(403);
  });
});

describe('pods and nodes, as AuthorizeNodeWithSelectors has them', () => {
  const noPath = "no relationship found between node 'n1' and this object";
  const names = (r: { json: Record<string, unknown> }): string[] =>
    ((r.json.items ?? []) as JsonObject[]).map((i) => String((i.metadata as JsonObject).name)).sort();
  const selector = 'can only list/watch pods with spec.nodeName field selector';

  it('lists and watches pods only with fieldSelector spec.nodeName=<its node>, or one pod bound to it by name', async () => {
    const mine = await n1.get('/api/v1/pods?fieldSelector=spec.nodeName%3Dn1');
    expect(mine.status, mine.text).toBe(200);
    expect(names(mine)).toEqual(['kube-proxy-n1', 'static-n1']);
    const w = n1.watch('/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&watch=true');
    try {
      await waitFor(() => w.events.filter((e) => e.type === 'ADDED').length === 2, {
        timeoutMs: 5000,
        what: 'the two pods of n1 ADDED',
      });
      expect(w.status).toBe(200);
    } finally {
      w.close();
    }
    await expectForbidden(n1.get('/api/v1/pods'), forbidden('list', 'pods', '', selector, ''));
    await expectForbidden(n1.get(`${NS}/pods`), forbidden('list', 'pods', '', selector));
    await expectForbidden(
      n1.get('/api/v1/pods?fieldSelector=spec.nodeName%3Dn2'),
      forbidden('list', 'pods', '', selector, ''),
    );
    await expectForbidden(n1.get('/api/v1/pods?watch=true'), forbidden('watch', 'pods', '', selector, ''));
    expect(names(await n1.get(`${NS}/pods?fieldSelector=metadata.name%3Dkube-proxy-n1`))).toEqual(['kube-proxy-n1']);
    await expectForbidden(
      n1.get(`${NS}/pods?fieldSelector=metadata.name%3Dtheirs`),
      forbidden('list', 'pods', 'theirs', noPath),
    );
  });

  it("gets only the pods bound to it (its mirror pods too), never another node's or one that does not exist", async () => {
    for (const name of ['kube-proxy-n1', 'static-n1'])
      expect((await n1.get(`${NS}/pods/${name}`)).status, name).toBe(200);
    await expectForbidden(n1.get(`${NS}/pods/theirs`), forbidden('get', 'pods', 'theirs', noPath));
    await expectForbidden(n1.get(`${NS}/pods/nowhere`), forbidden('get', 'pods', 'nowhere', noPath));
    await expectForbidden(
      n1.get(`${NS}/pods/kube-proxy-n1/ephemeralcontainers`),
      forbidden('get', 'pods/ephemeralcontainers', 'kube-proxy-n1', ''),
    );
  });

  it('reads only its own Node', async () => {
    expect((await n1.get('/api/v1/nodes/n1')).status).toBe(200);
    expect(names(await n1.get('/api/v1/nodes?fieldSelector=metadata.name%3Dn1'))).toEqual(['n1']);
    await expectForbidden(
      n1.get('/api/v1/nodes/n2'),
      forbidden('get', 'nodes', 'n2', "node 'n1' cannot read 'n2', only its own Node object", ''),
    );
    await expectForbidden(
      n1.get('/api/v1/nodes'),
      forbidden('list', 'nodes', '', "node 'n1' cannot read all nodes, only its own Node object", ''),
    );
    await expectForbidden(
      n1.get('/api/v1/nodes?watch=true'),
      forbidden('watch', 'nodes', '', "node 'n1' cannot read all nodes, only its own Node object", ''),
    );
  });

  it('adds no ephemeral container: the authorizer has no rule for it, and NodeRestriction refuses it even when RBAC would allow', async () => {
    const body = { spec: { ephemeralContainers: [{ name: 'debugger', image: 'i:1', targetContainerName: 'c' }] } };
    const path = `${NS}/pods/kube-proxy-n1/ephemeralcontainers`;
    await expectForbidden(
      n1.patch(path, body, 'application/strategic-merge-patch+json'),
      forbidden('patch', 'pods/ephemeralcontainers', 'kube-proxy-n1', ''),
    );
    server.grant('system:node:n1', 'pods/ephemeralcontainers', ['patch']);
    await expectForbidden(
      n1.patch(path, body, 'application/strategic-merge-patch+json'),
      `pods "kube-proxy-n1" is forbidden: unexpected pod subresource "ephemeralcontainers", only 'status' and 'eviction' are allowed`,
    );
    const kept = await admin.get(`${NS}/pods/kube-proxy-n1`);
    expect((kept.json.spec as JsonObject).ephemeralContainers).toBeUndefined();
  });
});

describe('service account tokens', () => {
  const tokenFor = (ref?: JsonObject): JsonObject => ({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: {
      audiences: ['https://kubernetes.default.svc.cluster.local'],
      expirationSeconds: 3607,
      ...(ref ? { boundObjectRef: ref } : {}),
    },
  });

  it('issues a token for the service account of a pod bound to the node, bound to that pod', async () => {
    const r = await n1.post(
      `${NS}/serviceaccounts/kube-proxy/token`,
      tokenFor({ kind: 'Pod', apiVersion: 'v1', name: 'kube-proxy-n1', uid: proxyUid }),
    );
    expect(r.status, r.text).toBe(201);
    expect(server.tokensIssued(proxyUid)).toBe(1);
    expect(server.issuedTokens(proxyUid)[0].requestedBy).toBe('system:node:n1');
  });

  it('refuses other service accounts, unbound requests and pods of other nodes', async () => {
    const noPath = "no relationship found between node 'n1' and this object";
    await expectForbidden(
      n1.post(
        `${NS}/serviceaccounts/default/token`,
        tokenFor({ kind: 'Pod', apiVersion: 'v1', name: 'static-n1', uid: 'x' }),
      ),
      forbidden('create', 'serviceaccounts/token', 'default', noPath),
    );
    const sa = (why: string): string => `serviceaccounts "kube-proxy" is forbidden: ${why}`;
    await expectForbidden(
      n1.post(`${NS}/serviceaccounts/kube-proxy/token`, tokenFor()),
      sa('node requested token not bound to a pod'),
    );
    await expectForbidden(
      n1.post(
        `${NS}/serviceaccounts/kube-proxy/token`,
        tokenFor({ kind: 'Pod', apiVersion: 'v1', name: 'kube-proxy-n1' }),
      ),
      sa('node requested token with a pod binding without a uid'),
    );
    await expectForbidden(
      n1.post(
        `${NS}/serviceaccounts/kube-proxy/token`,
        tokenFor({ kind: 'Pod', apiVersion: 'v1', name: 'kube-proxy-n1', uid: 'stale' }),
      ),
      sa(
        'the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated',
      ),
    );
    await expectForbidden(
      n1.post(
        `${NS}/serviceaccounts/kube-proxy/token`,
        tokenFor({ kind: 'Pod', apiVersion: 'v1', name: 'theirs', uid: theirsUid }),
      ),
      sa('node requested token bound to a pod scheduled on a different node'),
    );
    await expectForbidden(
      n1.get(`${NS}/serviceaccounts/kube-proxy`),
      forbidden('get', 'serviceaccounts', 'kube-proxy', 'can only create tokens for individual service accounts'),
    );
    expect(server.tokensIssued(theirsUid)).toBe(0);
  });
});

describe('services', () => {
  it('lets a node list and watch services in every namespace, and nothing more', async () => {
    const list = await n1.get('/api/v1/services');
    expect(list.status, list.text).toBe(200);
    expect((list.json.items as JsonObject[]).map((i) => (i.metadata as JsonObject).name)).toContain('kubernetes');
    const w = n1.watch('/api/v1/services?watch=true');
    try {
      await waitFor(() => w.events.some((e) => e.object.metadata?.name === 'kubernetes'), {
        timeoutMs: 5000,
        what: 'kubernetes Service ADDED',
      });
    } finally {
      w.close();
    }
    await expectForbidden(
      n1.post('/api/v1/namespaces/default/services', { metadata: { name: 'x' }, spec: { ports: [{ port: 1 }] } }),
      forbidden('create', 'services', '', '', 'default'),
    );
  });
});
