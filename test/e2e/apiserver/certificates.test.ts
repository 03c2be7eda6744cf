// The certificate side of the API agent against the fake API server, real kubectl approving: CSRs
// filed with a bootstrap token and reused across restarts, LoadClientCert while the server is away
// then back, the API client switching to a new certificate, kubeadm's embedded certificate
// rotated out at once.
import { X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadClientCert } from '../../../src/apiserver/credentials/certificate-bootstrap.js';
import {
  bootstrapClientUsages,
  CertificateRequestError,
  digestedName,
  fileCertificateRequest,
  KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
  nodeClientSubject,
  requestCertificate,
  waitForCertificate,
} from '../../../src/apiserver/credentials/certificate-signing-request.js';
import { ClientCertificateFiles } from '../../../src/apiserver/credentials/client-certificate.js';
import { startApiSide } from '../../../src/apiserver/api-side.js';
import { startClientCredentials, validateClientConfig } from '../../../src/apiserver/credentials/client-credentials.js';
import { KubeconfigError } from '../../../src/apiserver/client/kubeconfig.js';
import { ApiClient } from '../../../src/apiserver/client/client.js';
import { loadKubeconfig } from '../../../src/apiserver/client/kubeconfig.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { FakeStaticPods, FakeStatuses, fakeNodeInfo } from './fakes.js';

const dir = useTmpDir('apiserver-certificates');
const TOKEN = 'abcdef.0123456789abcdef';
let api: FakeApiServer;
let kubectl: Kubectl;
let bootstrapPath: string;
const log = memoryLogger(2);

type Csr = {
  metadata: { name: string; uid: string };
  spec: Record<string, unknown>;
  status: { conditions?: { type: string }[]; certificate?: string };
};
const csrs = (): Csr[] => api.objects('certificatesigningrequests') as never;
const csr = (name: string): Csr | undefined => api.object('certificatesigningrequests', '', name) as never;
const fingerprint = (pem: string | Buffer): string => new X509Certificate(pem).fingerprint256;

beforeAll(async () => {
  api = await startFakeApiServer();
  kubectl = new Kubectl(api.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
  bootstrapPath = api.writeBootstrapKubeconfig(join(dir, 'bootstrap-kubelet.conf'), TOKEN, { embed: false });
});

afterAll(async () => {
  if (process.env.SHOW_AGENT_LOG) console.log(log.lines.join('\n'));
  await api?.dispose();
});

describe('certificate signing requests from bootlet', () => {
  it("files the kubelet's node-csr-<digest> request with the bootstrap token and gets the certificate once kubectl approves", async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const subject = nodeClientSubject('n1');
    const usages = bootstrapClientUsages(privateKey);
    const client = new ApiClient(loadKubeconfig(bootstrapPath));
    const abort = new AbortController();
    const spec = {
      subject,
      signerName: KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
      usages,
      name: digestedName(privateKey, subject, usages),
    };
    const issued = requestCertificate(client, privateKey, spec, {
      timeoutMs: 60_000,
      signal: abort.signal,
      logger: log.logger,
    });
    const filed = await waitFor(() => csr(spec.name), { timeoutMs: 10_000, what: 'the CSR on the server' });
    expect(filed.spec).toMatchObject({
      signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
      usages: ['digital signature', 'client auth'],
      username: 'system:bootstrap:abcdef',
    });
    expect(await kubectl.ok(['certificate', 'approve', spec.name])).toContain('approved');
    const pem = await issued;
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe('O=system:nodes\nCN=system:node:n1');
    expect(
      cert.publicKey
        .export({ type: 'spki', format: 'der' })
        .equals(createPublicKey(privateKey).export({ type: 'spki', format: 'der' })),
    ).toBe(true);
    // Filed again with the same key (a restart): the existing request is taken, not a new one.
    const again = await fileCertificateRequest(client, privateKey, spec);
    expect(again).toEqual({ name: spec.name, uid: filed.metadata.uid });
    // The same name with another key is not ours.
    await expect(
      fileCertificateRequest(client, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, spec),
    ).rejects.toThrow(/not signed with this node's key/);
    client.close();
  });

  it('gives up on a request that is denied or deleted, saying which', async () => {
    const client = new ApiClient(loadKubeconfig(bootstrapPath));
    const signal = new AbortController().signal;
    for (const [verb, expected] of [
      ['deny', /is denied, reason: KubectlDeny/],
      ['delete', /was deleted/],
    ] as const) {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const { name, uid } = await fileCertificateRequest(client, privateKey, {
        subject: nodeClientSubject('n1'),
        signerName: KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
        usages: ['digital signature', 'client auth'],
      });
      expect(name).toMatch(/^csr-[a-z0-9]{5}$/);
      const outcome = waitForCertificate(client, name, uid, { timeoutMs: 60_000, signal, logger: log.logger }).then(
        () => undefined,
        (e: unknown) => e,
      );
      await kubectl.ok(verb === 'deny' ? ['certificate', 'deny', name] : ['delete', 'csr', name]);
      const err = await outcome;
      expect(err).toBeInstanceOf(CertificateRequestError);
      expect((err as Error).message).toMatch(expected);
    }
    client.close();
  });
});

describe('LoadClientCert', () => {
  it('retries while the server is away, keeps its key across restarts, and writes the pair and the kubeconfig', async () => {
    const certDir = join(dir, 'boot', 'pki');
    const kubeconfigPath = join(dir, 'boot', 'kubelet.conf');
    const bootstrap = loadKubeconfig(bootstrapPath);
    const before = csrs().length;
    await api.stop();
    const request = (client: ApiClient, key: import('node:crypto').KeyObject, signal: AbortSignal): Promise<string> => {
      const subject = nodeClientSubject('boot-1');
      const usages = bootstrapClientUsages(key);
      return requestCertificate(
        client,
        key,
        { subject, signerName: KUBE_APISERVER_CLIENT_KUBELET_SIGNER, usages, name: digestedName(key, subject, usages) },
        { timeoutMs: 60_000, signal, logger: log.logger },
      );
    };
    // A first run that is stopped (bootlet restarted) while the server is away.
    const first = new AbortController();
    const run1 = loadClientCert({
      kubeconfigPath,
      bootstrap,
      certDir,
      request,
      signal: first.signal,
      logger: log.logger,
    });
    const tmpKey = join(certDir, 'kubelet-client.key.tmp');
    await waitFor(
      () =>
        log.lines.some(
          (l) => l.includes('Bootstrapping the client certificate failed; retrying') && l.includes('"serverAway":true'),
        ),
      { timeoutMs: 10_000, what: 'a retry while the server is away' },
    );
    const key = readFileSync(tmpKey, 'utf8');
    first.abort();
    await expect(run1).rejects.toThrow();
    // The second run finds the server and files the request named after the same key.
    const second = new AbortController();
    const run2 = loadClientCert({
      kubeconfigPath,
      bootstrap,
      certDir,
      request,
      signal: second.signal,
      logger: log.logger,
    });
    await api.start();
    const subject = nodeClientSubject('boot-1');
    const pending = createPrivateKey(key);
    const name = digestedName(pending, subject, bootstrapClientUsages(pending));
    await waitFor(() => csr(name), { timeoutMs: 15_000, what: `the CSR ${name}` });
    await kubectl.ok(['certificate', 'approve', name]);
    await run2;
    expect(csrs().length).toBe(before + 1);
    const current = join(certDir, 'kubelet-client-current.pem');
    expect(lstatSync(current).isSymbolicLink()).toBe(true);
    expect(readlinkSync(current)).toMatch(/\/kubelet-client-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/);
    expect(readFileSync(current, 'utf8')).toContain(key.trim());
    expect(existsSync(tmpKey)).toBe(false);
    const conn = loadKubeconfig(kubeconfigPath);
    expect(conn).toMatchObject({
      server: api.url,
      caFile: api.caFile,
      certFile: current,
      keyFile: current,
      token: undefined,
    });
    const client = new ApiClient(conn);
    await client.list('/api/v1/nodes', { fieldSelector: 'metadata.name=boot-1' });
    client.close();
    expect(api.requests.at(-1)).toMatchObject({ path: '/api/v1/nodes', user: 'system:node:boot-1', status: 200 });
  });
});

describe("the API client's certificate", () => {
  it('changes for new requests when the file changes, without a restart', async () => {
    const file = join(dir, 'switch.pem');
    const a = api.issueClientCert('system:node:sw', ['system:nodes']);
    const b = api.issueClientCert('system:node:sw', ['system:nodes']);
    writeFileSync(file, a.certPem + a.keyPem);
    const source = new ClientCertificateFiles({
      locate: () => ({ certFile: file, keyFile: file }),
      logger: log.logger,
    });
    const client = new ApiClient({
      server: api.url,
      ca: Buffer.from(api.caPem),
      clientCertificate: source,
      source: 'test',
    });
    await client.list('/api/v1/nodes', { fieldSelector: 'metadata.name=sw' });
    expect(api.requests.at(-1)?.clientCert).toBe(fingerprint(a.certPem));
    writeFileSync(file, b.certPem + b.keyPem);
    source.reload();
    await client.list('/api/v1/nodes', { fieldSelector: 'metadata.name=sw' });
    expect(api.requests.at(-1)?.clientCert).toBe(fingerprint(b.certPem));
    client.close();
  });
});

describe('rotation', () => {
  it("takes kubeadm's embedded certificate into the store and replaces it at once with its own key", async () => {
    api.autoApprove({ selfNodeClient: true });
    const seed = api.issueClientCert('system:node:cp-1', ['system:nodes']);
    const kubeconfigPath = api.writeKubeconfig(join(dir, 'kubeadm-kubelet.conf'), 'system:node:cp-1', ['system:nodes']);
    void seed;
    const certDir = join(dir, 'rotate', 'pki');
    const creds = startClientCredentials({
      kubeconfigPath,
      certDir,
      nodeName: 'cp-1',
      rotateCertificates: true,
      logger: log.logger,
    });
    try {
      expect(creds.now).toBeDefined();
      const current = join(certDir, 'kubelet-client-current.pem');
      const seeded = readFileSync(current, 'utf8');
      const embedded = Buffer.from(
        (readFileSync(kubeconfigPath, 'utf8').match(/client-certificate-data: (\S+)/) ?? [])[1] ?? '',
        'base64',
      ).toString();
      expect(fingerprint(seeded)).toBe(fingerprint(embedded));
      await waitFor(() => fingerprint(readFileSync(current)) !== fingerprint(embedded), {
        timeoutMs: 20_000,
        what: 'the embedded certificate replaced',
      });
      const renewal = csrs().find((c) => c.spec.username === 'system:node:cp-1');
      expect(renewal?.metadata.name).toMatch(/^csr-/);
      expect(renewal?.spec.usages).toEqual(['digital signature', 'client auth']);
      const client = new ApiClient(await creds.ready);
      await client.list('/api/v1/nodes', { fieldSelector: 'metadata.name=cp-1' });
      expect(api.requests.at(-1)?.clientCert).toBe(fingerprint(readFileSync(current)));
      expect(api.requests.at(-1)?.user).toBe('system:node:cp-1');
      client.close();
      expect(log.lines.some((l) => l.includes('Client certificate rotation deadline'))).toBe(true);
    } finally {
      await creds.stop();
      api.autoApprove({ selfNodeClient: false });
    }
  });
});

describe('the API side with a bootstrap kubeconfig', () => {
  it('refuses to start when neither the kubeconfig nor the bootstrap kubeconfig can be used, naming the file', () => {
    const missing = join(dir, 'no-such-bootstrap.conf');
    expect(() => validateClientConfig(join(dir, 'no-such-kubelet.conf'), missing)).toThrow(KubeconfigError);
    expect(() => validateClientConfig(join(dir, 'no-such-kubelet.conf'), missing)).toThrow(
      `kubeconfig ${missing}: cannot read: ENOENT`,
    );
    expect(() => validateClientConfig(join(dir, 'no-such-kubelet.conf'), bootstrapPath)).not.toThrow();
  });

  it('starts once the certificate is issued, and sends the events recorded before', async () => {
    const kubeconfigPath = join(dir, 'side', 'kubelet.conf');
    const side = startApiSide({
      kubeconfigPath,
      bootstrapKubeconfigPath: bootstrapPath,
      certDir: join(dir, 'side', 'pki'),
      rotateCertificates: false,
      nodeInfo: fakeNodeInfo('side-1'),
      staticPods: new FakeStaticPods(),
      statuses: new FakeStatuses(),
      logger: log.logger,
    });
    try {
      expect(side.state().connected).toBe(false);
      side.recorder.event(
        { kind: 'Node', name: 'side-1', uid: 'side-1' },
        'Normal',
        'EarlyBird',
        'recorded before the API side had an identity',
      );
      const filed = await waitFor(
        () =>
          csrs().find(
            (c) =>
              c.spec.username === 'system:bootstrap:abcdef' &&
              c.metadata.name.startsWith('node-csr-') &&
              !c.status.certificate &&
              !c.status.conditions?.length,
          ),
        { timeoutMs: 15_000, what: 'the CSR' },
      );
      await kubectl.ok(['certificate', 'approve', filed.metadata.name]);
      await waitFor(() => api.object('nodes', '', 'side-1'), { timeoutMs: 20_000, what: 'the node registered' });
      await waitFor(() => api.objects('events', 'default').find((e) => e.reason === 'EarlyBird'), {
        timeoutMs: 20_000,
        what: 'the early event',
      });
      expect(
        api.requests.find((r) => r.method === 'POST' && r.path === '/api/v1/nodes' && r.status === 201)?.user,
      ).toBe('system:node:side-1');
    } finally {
      await side.stop();
    }
  });
});
