// serverTLSBootstrap with the packaged agent: the kubelet API is not served until the node's
// kubernetes.io/kubelet-serving CSR (CN system:node:<name>, O system:nodes, the node's name and IP
// as SANs) is approved with the real kubectl; then the issued certificate is served at once, an API
// server that verifies kubelets against the cluster CA reaches it (kubectl logs), and a short-lived
// certificate is rotated with a new CSR.
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { freePorts } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from '../agent/harness.js';

const NODE = 'serving-e2e';
const h = useAgentHarness('serving', NODE);
let api: FakeApiServer;
let kubectl: Kubectl;
let port: number;

type Csr = {
  metadata: { name: string };
  spec: { username: string; signerName: string; usages: string[]; request: string };
  status: { certificate?: string; conditions?: { type: string }[] };
};
const servingCsrs = (): Csr[] =>
  (api.objects('certificatesigningrequests') as unknown as Csr[]).filter(
    (c) => c.spec.signerName === 'kubernetes.io/kubelet-serving',
  );

function opensslRequest(b64: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('openssl', ['req', '-noout', '-text', '-verify'], (err, stdout, stderr) =>
      err ? reject(new Error(stderr)) : resolve(stdout + stderr),
    );
    child.stdin?.end(Buffer.from(b64, 'base64'));
  });
}

/** The certificate the kubelet API presents, verified against the cluster CA for 127.0.0.1; undefined when not served. */
function servedCertificate(): Promise<X509Certificate | undefined> {
  return new Promise((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port, ca: api.caPem, checkServerIdentity: () => undefined }, () => {
      resolve(s.authorized ? s.getPeerX509Certificate() : undefined);
      s.destroy();
    });
    s.on('error', () => resolve(undefined));
  });
}

beforeAll(async () => {
  [port] = await freePorts(1);
  api = await startFakeApiServer({ dir: h.dir });
  api.configureSigner({ ttlSeconds: 40, backdateSeconds: 0, minSeconds: 0 });
  kubectl = new Kubectl(api.writeAdminKubeconfig(join(h.dir, 'admin.kubeconfig')), h.dir);
  const kubeconfig = api.writeKubeconfig(join(h.dir, 'kubelet.conf'), `system:node:${NODE}`, ['system:nodes']);
  const config = join(h.dir, 'serving-config.yaml');
  writeFileSync(
    config,
    `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${h.podLogsDir}\nserverTLSBootstrap: true\nauthentication:\n  x509: {clientCAFile: ${api.caFile}}\n`,
  );
  h.write(
    'hello.yaml',
    `apiVersion: v1
kind: Pod
metadata: {name: hello, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "echo hello from a verified kubelet; exec sleep 3600"]
`,
  );
  h.launch({
    configFile: config,
    kubeletPort: port,
    extraArgs: [`--kubeconfig=${kubeconfig}`, '--node-ip=127.0.0.1', `--cert-dir=${join(h.rootDir, 'pki')}`],
  });
});

let failed = false;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failed = true;
});
afterAll(async () => {
  if (failed || process.env.SHOW_AGENT_LOG)
    console.log(
      `agent log:\n${h
        .agent()
        .lines.filter((l) => /certificat|kubelet API|csr/i.test(l))
        .slice(-40)
        .join('\n')}`,
    );
  await api?.dispose();
});

describe('serverTLSBootstrap', () => {
  it('files a kubelet-serving CSR with the node name and IP, and serves nothing before it is approved', async () => {
    const csr = await waitFor(() => servingCsrs()[0], { timeoutMs: 60_000, what: 'the serving CSR' });
    expect(csr.spec.username).toBe(`system:node:${NODE}`);
    expect(csr.spec.usages).toEqual(['digital signature', 'server auth']);
    const text = await opensslRequest(csr.spec.request);
    expect(text).toContain('verify OK');
    expect(text).toMatch(/Subject: O\s*=\s*system:nodes, CN\s*=\s*system:node:serving-e2e/);
    expect(text).toMatch(/DNS:serving-e2e, IP Address:127\.0\.0\.1/);
    expect(await servedCertificate()).toBeUndefined();
  });

  it('serves the issued certificate as soon as kubectl approves the CSR; an API server that verifies kubelets reaches it', async () => {
    await kubectl.ok(['certificate', 'approve', servingCsrs()[0]!.metadata.name]);
    const cert = await waitFor(() => servedCertificate(), {
      timeoutMs: 30_000,
      what: 'the issued serving certificate served',
    });
    expect(cert.subject).toBe(`O=system:nodes\nCN=system:node:${NODE}`);
    expect(cert.subjectAltName).toBe(`DNS:${NODE}, IP Address:127.0.0.1`);
    api.verifyKubelets(api.caPem);
    await waitFor(() => api.object('pods', 'kube-system', `hello-${NODE}`), {
      timeoutMs: 60_000,
      what: 'the mirror pod',
    });
    const logs = await waitFor(
      async () => {
        const r = await kubectl.run(['logs', '-n', 'kube-system', `hello-${NODE}`]);
        return r.code === 0 && r.stdout;
      },
      { timeoutMs: 60_000, what: 'kubectl logs through a verified kubelet' },
    );
    expect(logs).toBe('hello from a verified kubelet\n');
  });

  it('rotates the short-lived serving certificate with a new CSR and serves the new one', async () => {
    const first = (await servedCertificate())!.fingerprint256;
    // The fake API server lists by name, so the renewal is the CSR not yet approved, not the second.
    const renewal = await waitFor(
      () => servingCsrs().find((c) => !c.status?.conditions?.some((x) => x.type === 'Approved')),
      { timeoutMs: 90_000, what: 'a renewal CSR' },
    );
    await kubectl.ok(['certificate', 'approve', renewal.metadata.name]);
    const next = await waitFor(
      async () => {
        const c = await servedCertificate();
        return c && c.fingerprint256 !== first && c;
      },
      { timeoutMs: 90_000, what: 'the renewed certificate served' },
    );
    expect(next.subject).toBe(`O=system:nodes\nCN=system:node:${NODE}`);
    // Both requests, and their waits, went over the node's one connection (the one its lease renewals use).
    const user = `system:node:${NODE}`;
    const nodeConnections = new Set(
      api.requests
        .filter((r) => r.user === user && r.path.startsWith('/apis/coordination.k8s.io/'))
        .map((r) => r.connection),
    );
    const csrRequests = api.requests.filter((r) => r.user === user && r.path.startsWith('/apis/certificates.k8s.io/'));
    expect(csrRequests.filter((r) => r.method === 'POST')).toHaveLength(2);
    expect(
      csrRequests
        .filter((r) => !nodeConnections.has(r.connection))
        .map((r) => `${r.method} ${r.path}?${r.query} on ${r.connection}`),
    ).toEqual([]);
  }, 240_000);
});
