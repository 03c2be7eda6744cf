// The fake's certificates.k8s.io/v1 API as kubelets and real kubectl use it: bootstrap tokens, CSRs
// filed and read back, `kubectl certificate approve|deny` (PUT .../approval), the signer issuing
// from the CA, the kubelet-client checks, auto-approval as kubeadm enables it.
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { makeTmpDir, removeTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { TestClient } from './client.js';
import { Kubectl } from './kubectl.js';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const TOKEN = 'abcdef.0123456789abcdef';
let server: FakeApiServer;
let dir: string;
let kubectl: Kubectl;
let bootstrapper: TestClient;

/** A request made by openssl (not by bootlet's own encoder). */
function opensslCsr(subject: string): Promise<string> {
  const d = mkdtempSync(join(dir, 'csr-'));
  return new Promise((resolve, reject) =>
    execFile(
      'openssl',
      [
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(d, 'k'),
        '-out',
        join(d, 'r'),
        '-subj',
        subject,
      ],
      (err) => (err ? reject(err) : resolve(readFileSync(join(d, 'r'), 'utf8'))),
    ),
  );
}

async function file(
  client: TestClient,
  name: string,
  subject: string,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const request = Buffer.from(await opensslCsr(subject)).toString('base64');
  const r = await client.post(CSRS, {
    metadata: { name },
    spec: {
      request,
      signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
      usages: ['digital signature', 'client auth'],
      ...extra,
    },
  });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

function csr(name: string): {
  spec: Record<string, unknown>;
  status: { conditions?: { type: string; reason?: string; message?: string }[]; certificate?: string };
} {
  return server.object('certificatesigningrequests', '', name) as never;
}

beforeAll(async () => {
  dir = makeTmpDir('fake-apiserver-certificates');
  server = await startFakeApiServer();
  kubectl = new Kubectl(server.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
  server.addBootstrapToken(TOKEN);
  bootstrapper = new TestClient(server, { token: TOKEN }, 'h1');
});

afterAll(async () => {
  bootstrapper?.close();
  await server?.dispose();
  if (dir) removeTmpDir(dir);
});

describe('bootstrap tokens', () => {
  it('authenticate as system:bootstrap:<id> in system:bootstrappers, allowed to file CSRs and nothing else', async () => {
    expect((await bootstrapper.get(CSRS)).status).toBe(200);
    const nodes = await bootstrapper.get('/api/v1/nodes');
    expect(nodes.status).toBe(403);
    expect(nodes.json.message).toBe(
      'nodes is forbidden: User "system:bootstrap:abcdef" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    const stranger = new TestClient(server, { token: 'zzzzzz.0123456789abcdef' }, 'h1');
    expect((await stranger.get(CSRS)).status).toBe(401);
    stranger.close();
    expect(() => server.addBootstrapToken('not-a-token')).toThrow('not a bootstrap token');
  });
});

describe('certificate signing requests', () => {
  it('records who asked, starts with an empty status, and lists as kubectl get csr shows it', async () => {
    const created = await file(bootstrapper, 'node-csr-a', '/O=system:nodes/CN=system:node:n1');
    expect(created).toMatchObject({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      spec: {
        username: 'system:bootstrap:abcdef',
        groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'],
      },
      status: {},
    });
    const table = await kubectl.ok(['get', 'csr']);
    expect(table).toMatch(/^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION\n/);
    expect(table).toMatch(
      /node-csr-a\s+\d+s\s+kubernetes.io\/kube-apiserver-client-kubelet\s+system:bootstrap:abcdef\s+<none>\s+Pending/,
    );
  });

  it('is approved by kubectl certificate approve through the approval subresource, then issued by the signer', async () => {
    server.configureSigner({ ttlSeconds: 3600, backdateSeconds: 300 });
    const out = await kubectl.ok(['certificate', 'approve', 'node-csr-a']);
    expect(out.trim()).toBe('certificatesigningrequest.certificates.k8s.io/node-csr-a approved');
    expect(
      server.requests.some((r) => r.method === 'PUT' && r.path === `${CSRS}/node-csr-a/approval` && r.status === 200),
    ).toBe(true);
    await waitFor(() => csr('node-csr-a').status.certificate, { timeoutMs: 10_000, what: 'the certificate issued' });
    expect(csr('node-csr-a').status.conditions).toMatchObject([
      {
        type: 'Approved',
        status: 'True',
        reason: 'KubectlApprove',
        message: 'This CSR was approved by kubectl certificate approve.',
      },
    ]);
    const cert = new X509Certificate(Buffer.from(csr('node-csr-a').status.certificate!, 'base64'));
    expect(cert.subject).toBe('O=system:nodes\nCN=system:node:n1');
    expect(cert.checkIssued(new X509Certificate(server.caPem))).toBe(true);
    expect(cert.verify(new X509Certificate(server.caPem).publicKey)).toBe(true);
    const lifetime = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
    expect(lifetime / 1000).toBeCloseTo(3900, -1); // ttl < 8 h: backdated at the start only, 1 h + 5 min in all
    expect(Date.parse(cert.validFrom)).toBeLessThan(Date.now() - 290_000);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(await kubectl.ok(['get', 'csr', 'node-csr-a'])).toMatch(/node-csr-a\s+.*\s+Approved,Issued/);
  });

  it("honours spec.expirationSeconds within the signer's bounds and refuses one under ten minutes", async () => {
    server.configureSigner({ ttlSeconds: 365 * 24 * 3600, backdateSeconds: 0 });
    await file(bootstrapper, 'short', '/O=system:nodes/CN=system:node:n1', { expirationSeconds: 900 });
    await kubectl.ok(['certificate', 'approve', 'short']);
    await waitFor(() => csr('short').status.certificate, { timeoutMs: 10_000, what: 'the certificate issued' });
    const cert = new X509Certificate(Buffer.from(csr('short').status.certificate!, 'base64'));
    expect((Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000).toBeCloseTo(900, -1);
    expect(await kubectl.ok(['get', 'csr', 'short'])).toMatch(/short\s+\S+\s+\S+\s+\S+\s+15m\s+Approved,Issued/);
    const request = Buffer.from(await opensslCsr('/O=system:nodes/CN=system:node:n1')).toString('base64');
    const tooShort = await bootstrapper.post(CSRS, {
      metadata: { name: 'too-short' },
      spec: {
        request,
        signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
        usages: ['client auth'],
        expirationSeconds: 60,
      },
    });
    expect(tooShort.status).toBe(422);
    expect(tooShort.json.message).toContain(
      'spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)',
    );
  });

  it('marks a kubelet-client request that is not for a node Failed instead of issuing it', async () => {
    await file(bootstrapper, 'wrong-org', '/O=system:masters/CN=system:node:n1');
    await kubectl.ok(['certificate', 'approve', 'wrong-org']);
    await waitFor(() => csr('wrong-org').status.conditions?.find((c) => c.type === 'Failed'), {
      timeoutMs: 10_000,
      what: 'the Failed condition',
    });
    expect(csr('wrong-org').status.conditions?.find((c) => c.type === 'Failed')).toMatchObject({
      reason: 'SignerValidationFailure',
      message: 'subject organization is not system:nodes',
    });
    expect(csr('wrong-org').status.certificate).toBeUndefined();
  });

  it('is denied by kubectl certificate deny, which approve then refuses', async () => {
    await file(bootstrapper, 'to-deny', '/O=system:nodes/CN=system:node:n1');
    await kubectl.ok(['certificate', 'deny', 'to-deny']);
    expect(csr('to-deny').status.conditions).toMatchObject([{ type: 'Denied', reason: 'KubectlDeny' }]);
    const r = await kubectl.run(['certificate', 'approve', 'to-deny']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('certificate signing request "to-deny" is already Denied');
  });

  it('refuses what the API server refuses: a request that is no CSR, no usages, both Approved and Denied', async () => {
    const notPem = await bootstrapper.post(CSRS, {
      metadata: { name: 'bad' },
      spec: {
        request: Buffer.from('hello').toString('base64'),
        signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
        usages: ['client auth'],
      },
    });
    expect(notPem.status).toBe(422);
    expect(notPem.json.message).toContain('PEM block type must be CERTIFICATE REQUEST');
    const request = Buffer.from(await opensslCsr('/O=system:nodes/CN=system:node:n1')).toString('base64');
    const noUsages = await bootstrapper.post(CSRS, {
      metadata: { name: 'bad' },
      spec: { request, signerName: 'kubernetes.io/kube-apiserver-client-kubelet' },
    });
    expect(noUsages.json.message).toContain('spec.usages: Required value');
    const admin = TestClient.forUser(server, 'system:admin', ['system:masters'], 'h1');
    const current = (await admin.get(`${CSRS}/node-csr-a`)).json as Record<string, unknown> & {
      status: { conditions: unknown[] };
    };
    current.status.conditions.push({ type: 'Denied', status: 'True', reason: 'x', message: 'y' });
    const both = await admin.put(`${CSRS}/node-csr-a/approval`, current as never);
    expect(both.status).toBe(422);
    expect(both.json.message).toContain('Approved and Denied conditions are mutually exclusive');
    const noSpecChange = await admin.put(`${CSRS}/node-csr-a`, {
      ...current,
      spec: { ...(current.spec as object), usages: ['server auth'] },
      status: {},
    } as never);
    expect(noSpecChange.status).toBe(200);
    expect(csr('node-csr-a').spec.usages).toEqual(['digital signature', 'client auth']);
    expect(csr('node-csr-a').status.certificate).toBeTruthy();
    admin.close();
  });

  it("auto-approves a node renewing its own certificate, as kubeadm's selfnodeclient binding does", async () => {
    server.autoApprove({ selfNodeClient: true });
    const node = TestClient.forUser(server, 'system:node:n1', ['system:nodes'], 'h1');
    await file(node, 'renewal', '/O=system:nodes/CN=system:node:n1');
    await file(node, 'for-another', '/O=system:nodes/CN=system:node:n2');
    await waitFor(() => csr('renewal').status.certificate, { timeoutMs: 10_000, what: 'the renewal issued' });
    expect(csr('renewal').status.conditions).toMatchObject([
      {
        type: 'Approved',
        reason: 'AutoApproved',
        message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
      },
    ]);
    expect(csr('for-another').status.conditions ?? []).toEqual([]);
    server.autoApprove({ selfNodeClient: false });
    node.close();
  });
});
