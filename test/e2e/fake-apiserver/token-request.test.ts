// TokenRequest (serviceaccounts/<name>/token) through `kubectl create token` and the API: the
// signed JWT and its claims, the server's defaults and refusals, the issued-token record, and
// TokenReview of what was issued.
import { createPublicKey, verify } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer, type JsonObject } from '../../support/fake-apiserver/index.js';
import { makeTmpDir, removeTmpDir } from '../../support/tmp.js';
import { TestClient } from './client.js';
import { nodeObject } from './fixtures.js';
import { Kubectl } from './kubectl.js';
import { waitFor } from '../../support/wait.js';

let server: FakeApiServer;
let dir: string;
let kubectl: Kubectl;
let admin: TestClient;
let podUid: string;
let saUid: string;
let nodeUid: string;

interface Jwt {
  header: { alg: string; kid: string };
  claims: JsonObject & { aud: string[]; exp: number; iat: number; nbf: number; 'kubernetes.io': JsonObject };
}

function decode(token: string): Jwt {
  const [h, c, sig] = token.split('.');
  const ok = verify(
    'sha256',
    Buffer.from(`${h}.${c}`),
    { key: createPublicKey(server.serviceAccountPublicKeyPem), dsaEncoding: 'ieee-p1363' },
    Buffer.from(sig, 'base64url'),
  );
  expect(ok, 'signature verifies with the service account key').toBe(true);
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString()) as Jwt['header'],
    claims: JSON.parse(Buffer.from(c, 'base64url').toString()) as Jwt['claims'],
  };
}

function pod(name: string, sa: string, node = 'n1'): JsonObject {
  return {
    metadata: { name, namespace: 'kube-system' },
    spec: {
      nodeName: node,
      serviceAccountName: sa,
      containers: [{ name: 'c', image: 'registry.k8s.io/kube-proxy:v1.32.4' }],
    },
  };
}

beforeAll(async () => {
  dir = makeTmpDir('fake-apiserver-token-request');
  server = await startFakeApiServer();
  kubectl = new Kubectl(server.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
  admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
  nodeUid = String(server.seedObject('nodes', nodeObject('n1') as never).metadata.uid);
  await kubectl.ok(['create', 'serviceaccount', 'kube-proxy', '-n', 'kube-system']);
  saUid = String(server.object('serviceaccounts', 'kube-system', 'kube-proxy')?.metadata.uid);
  podUid = String(server.seedObject('pods', pod('kube-proxy-abcde', 'kube-proxy') as never).metadata.uid);
  server.seedObject('pods', pod('other-sa', 'default') as never);
});

afterAll(async () => {
  admin?.close();
  await server?.dispose();
  if (dir) removeTmpDir(dir);
});

/** kubectl's arguments to create a token for kube-system's kube-proxy service account, with more flags. */
const kubeProxyToken = (...flags: string[]): string[] =>
  ['create', 'token', 'kube-proxy', '-n', 'kube-system'].concat(flags);
/** The same, bound to the pod `name`. */
const boundToken = (name: string, ...flags: string[]): string[] =>
  kubeProxyToken('--bound-object-kind', 'Pod', '--bound-object-name', name, ...flags);

describe('kubectl create token', () => {
  it('issues a pod-bound JWT with the audience and duration asked for', async () => {
    const before = Math.floor(Date.now() / 1000);
    const out = await kubectl.ok(boundToken('kube-proxy-abcde', '--audience', 'X', '--duration', '10m'));
    const { header, claims } = decode(out.trim());
    expect(header.alg).toBe('ES256');
    expect(header.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(claims).toMatchObject({
      iss: 'https://kubernetes.default.svc.cluster.local',
      sub: 'system:serviceaccount:kube-system:kube-proxy',
      aud: ['X'],
      'kubernetes.io': {
        namespace: 'kube-system',
        serviceaccount: { name: 'kube-proxy', uid: saUid },
        pod: { name: 'kube-proxy-abcde', uid: podUid },
        node: { name: 'n1', uid: nodeUid },
      },
    });
    expect(claims.exp - claims.iat).toBe(600);
    expect(claims.nbf).toBe(claims.iat);
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.tokensIssued(podUid)).toBe(1);
    expect(server.issuedTokens(podUid)[0]).toMatchObject({
      namespace: 'kube-system',
      serviceAccount: 'kube-proxy',
      podName: 'kube-proxy-abcde',
      audiences: ['X'],
      expirationSeconds: 600,
      requestedBy: 'system:admin',
    });
  });

  it("defaults the audience to the server's and the duration to an hour, unbound", async () => {
    const { claims } = decode((await kubectl.ok(['create', 'token', 'default'])).trim());
    expect(claims.aud).toEqual(['https://kubernetes.default.svc.cluster.local']);
    expect(claims.exp - claims.iat).toBe(3600);
    expect(claims['kubernetes.io']).not.toHaveProperty('pod');
  });

  it('refuses what the real server refuses, in its words', async () => {
    const short = await kubectl.run(kubeProxyToken('--duration', '5m'));
    expect(short.stderr).toContain(
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes',
    );
    const missing = await kubectl.run(boundToken('gone'));
    expect(missing.stderr).toContain('pods "gone" not found');
    const uid = await kubectl.run(boundToken('kube-proxy-abcde', '--bound-object-uid', '0000'));
    expect(uid.stderr).toContain(
      'Operation cannot be fulfilled on Pod "kube-proxy-abcde": the UID in the bound object reference (0000) does not match the UID in record. The object might have been deleted and then recreated',
    );
    const other = await kubectl.run(boundToken('other-sa'));
    expect(other.stderr).toContain(
      'cannot bind token for serviceaccount "kube-proxy" to pod running with different serviceaccount name.',
    );
    const sa = await kubectl.run(['create', 'token', 'nobody']);
    expect(sa.stderr).toContain('serviceaccounts "nobody" not found');
    expect(server.tokensIssued(podUid)).toBe(1);
  });
});

describe('the API', () => {
  it("extends the kubelet's 3607 s request to a year with warnafter, and reports the hour in status", async () => {
    const r = await admin.post('/api/v1/namespaces/kube-system/serviceaccounts/kube-proxy/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        expirationSeconds: 3607,
        boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'kube-proxy-abcde', uid: podUid },
      },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({
      kind: 'TokenRequest',
      metadata: { name: 'kube-proxy', namespace: 'kube-system' },
      spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3607 },
    });
    const status = r.json.status as { token: string; expirationTimestamp: string };
    const { claims } = decode(status.token);
    expect(claims.exp - claims.iat).toBe(365 * 24 * 3600);
    expect(claims['kubernetes.io'].warnafter).toBe(claims.iat + 3607);
    expect(Math.abs(Date.parse(status.expirationTimestamp) / 1000 - (claims.iat + 3607))).toBeLessThanOrEqual(1);
    expect(server.tokensIssued(podUid)).toBe(2);
  });

  it('issues short tokens when told to (configureTokens), which stop authenticating when they expire', async () => {
    server.configureTokens({ maxExpirationSeconds: 20, minExpirationSeconds: 1 });
    try {
      const capped = await admin.post('/api/v1/namespaces/kube-system/serviceaccounts/kube-proxy/token', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          expirationSeconds: 3607,
          boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'kube-proxy-abcde', uid: podUid },
        },
      });
      expect(capped.status, capped.text).toBe(201);
      const status = capped.json.status as { token: string; expirationTimestamp: string };
      const { claims } = decode(status.token);
      expect(claims.exp - claims.iat).toBe(20);
      expect(claims['kubernetes.io']).not.toHaveProperty('warnafter');
      expect((capped.json.spec as JsonObject).expirationSeconds).toBe(20);
      const brief = await admin.post('/api/v1/namespaces/kube-system/serviceaccounts/kube-proxy/token', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 1 },
      });
      const token = (brief.json.status as { token: string }).token;
      const review = async (): Promise<unknown> =>
        (
          await admin.post('/apis/authentication.k8s.io/v1/tokenreviews', {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: { token },
          })
        ).json.status;
      expect(await review()).toMatchObject({ authenticated: true });
      await waitFor(async () => ((await review()) as { authenticated: boolean }).authenticated === false, {
        timeoutMs: 10_000,
        what: 'the 1 s token to expire',
      });
    } finally {
      server.configureTokens({ maxExpirationSeconds: 0, minExpirationSeconds: 600 });
    }
  });

  it('authenticates an issued token (bearer and TokenReview) as the service account, for its audiences, until its pod is gone', async () => {
    const [forX, forApi] = server.issuedTokens(podUid).map((t) => t.token);
    expect(server.tokensIssued(podUid)).toBe(3);
    const review = await admin.post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: forX, audiences: ['X', 'Y'] },
    });
    expect(review.json.status).toMatchObject({
      authenticated: true,
      audiences: ['X'],
      user: {
        username: 'system:serviceaccount:kube-system:kube-proxy',
        uid: saUid,
        groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
        extra: {
          'authentication.kubernetes.io/pod-name': ['kube-proxy-abcde'],
          'authentication.kubernetes.io/pod-uid': [podUid],
          'authentication.kubernetes.io/node-name': ['n1'],
        },
      },
    });
    const notForApi = await admin.post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: forX },
    });
    expect(notForApi.json.status).toEqual({ authenticated: false });
    const wrongAudience = new TestClient(server, { token: forX });
    try {
      expect((await wrongAudience.get('/api/v1/namespaces/kube-system/secrets')).status).toBe(401);
    } finally {
      wrongAudience.close();
    }
    const asSa = new TestClient(server, { token: forApi });
    try {
      const r = await asSa.get('/api/v1/namespaces/kube-system/secrets');
      expect(r.status).toBe(403);
      expect(r.json.message).toBe(
        'secrets is forbidden: User "system:serviceaccount:kube-system:kube-proxy" cannot list resource "secrets" in API group "" in the namespace "kube-system"',
      );
    } finally {
      asSa.close();
    }
    server.store.remove('pods', 'kube-system', 'kube-proxy-abcde');
    const after = await admin.post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: forApi },
    });
    expect(after.json.status).toEqual({ authenticated: false });
  });
});
