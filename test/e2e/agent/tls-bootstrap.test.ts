// TLS bootstrap with the packaged agent, as kubeadm join sets a node up: only a bootstrap kubeconfig
// (a bootstrap token), `--rotate-certificates`, an API server that is not there yet. The static pods
// run all along; once the server appears the agent files a CSR, real kubectl approves it, the pair
// and the kubeconfig are written, the Node registers as system:node:<name>, and a short-lived
// certificate is rotated with the node's own credentials. Then, restarted without rotation and
// without a kubeconfig, it bootstraps the way the kubelet's LoadClientCert does.
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'tls-e2e';
const TOKEN = 'abcdef.0123456789abcdef';
const h = useAgentHarness('tlsboot', NODE);
let api: FakeApiServer;
let kubectl: Kubectl;
let bootstrapKubeconfig: string;
let kubeconfig: string;
let pki: string;
let sleeperContainer = '';

const sleeper = `apiVersion: v1
kind: Pod
metadata: {name: sleeper, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;

type Csr = {
  metadata: { name: string };
  spec: { username: string; signerName: string; usages: string[]; request: string };
  status: { certificate?: string; conditions?: { type: string }[] };
};
const csrs = (): Csr[] => api.objects('certificatesigningrequests') as never;
const pairFiles = (): string[] =>
  existsSync(pki)
    ? readdirSync(pki)
        .filter((f) => /^kubelet-client-\d{4}(-\d\d){5}\.pem$/.test(f))
        .sort()
    : [];
const currentTarget = (): string | undefined => {
  try {
    return readlinkSync(join(pki, 'kubelet-client-current.pem'));
  } catch {
    return undefined;
  }
};
const fingerprintOf = (file: string): string => new X509Certificate(readFileSync(file)).fingerprint256;

function requestSubject(b64: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('openssl', ['req', '-noout', '-subject', '-verify'], (err, stdout, stderr) =>
      err ? reject(new Error(stderr)) : resolve(stdout.trim()),
    );
    child.stdin?.end(Buffer.from(b64, 'base64'));
  });
}

async function runningSleeper(): Promise<string | undefined> {
  return (await h.pods('sleeper'))[0]?.containers.find((c) => c.state === ContainerState.CONTAINER_RUNNING)?.id;
}

beforeAll(async () => {
  api = await startFakeApiServer({ dir: join(h.dir) });
  kubectl = new Kubectl(api.writeAdminKubeconfig(join(h.dir, 'admin.kubeconfig')), h.dir);
  bootstrapKubeconfig = api.writeBootstrapKubeconfig(join(h.dir, 'bootstrap-kubelet.conf'), TOKEN);
  kubeconfig = join(h.dir, 'kubelet.conf');
  pki = join(h.rootDir, 'pki');
  // A 40 s certificate is renewed 28-36 s after it is issued; renewals are approved as kubeadm does.
  api.configureSigner({ ttlSeconds: 40, backdateSeconds: 0, minSeconds: 0 });
  api.autoApprove({ selfNodeClient: true });
  await api.stop();
  h.write('sleeper.yaml', sleeper);
  h.launch({
    extraArgs: [`--kubeconfig=${kubeconfig}`, `--bootstrap-kubeconfig=${bootstrapKubeconfig}`, '--rotate-certificates'],
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
        .lines.filter((l) => l.includes('certificat') || l.includes('apiserver'))
        .slice(-80)
        .join('\n')}`,
    );
  await api?.dispose();
});

describe('TLS bootstrap of the packaged agent', () => {
  it('runs its static pods while the API server is away, and keeps retrying the bootstrap', async () => {
    sleeperContainer = await waitFor(runningSleeper, { timeoutMs: 60_000, what: 'sleeper running with no API server' });
    const agent = h.agent();
    await agent.waitForLog(
      (r) => r.msg === 'Requesting a client certificate failed; retrying' && r.serverAway === true,
      'the first failed attempt',
    );
    await waitFor(
      () => agent.records().filter((r) => r.msg === 'Requesting a client certificate failed; retrying').length >= 2,
      { timeoutMs: 30_000, what: 'a second attempt' },
    );
    // As the kubelet does with rotation on: the kubeconfig already names the pair to come.
    const doc = parse(readFileSync(kubeconfig, 'utf8')) as {
      users: { user: Record<string, string> }[];
      clusters: { cluster: Record<string, string> }[];
    };
    expect(doc.users[0].user).toEqual({
      'client-certificate': join(pki, 'kubelet-client-current.pem'),
      'client-key': join(pki, 'kubelet-client-current.pem'),
    });
    expect(doc.clusters[0].cluster.server).toBe(api.url);
    expect(Buffer.from(doc.clusters[0].cluster['certificate-authority-data'], 'base64').toString()).toBe(api.caPem);
    expect(existsSync(join(pki, 'kubelet-client-current.pem'))).toBe(false);
  });

  it('files a CSR with the bootstrap token once the server is there, which kubectl approves', async () => {
    await api.start();
    const filed = await waitFor(() => csrs().find((c) => c.spec.username === 'system:bootstrap:abcdef'), {
      timeoutMs: 30_000,
      what: 'the bootstrap CSR',
    });
    expect(filed.metadata.name).toMatch(/^csr-[a-z0-9]{5}$/);
    expect(filed.spec.signerName).toBe('kubernetes.io/kube-apiserver-client-kubelet');
    expect(filed.spec.usages).toEqual(['digital signature', 'client auth']);
    expect(await requestSubject(filed.spec.request)).toBe('subject=O = system:nodes, CN = system:node:tls-e2e');
    expect(await kubectl.ok(['certificate', 'approve', filed.metadata.name])).toContain('approved');
  });

  it('writes the pair and the link, and registers the Node as system:node:<name>', async () => {
    await waitFor(() => currentTarget(), { timeoutMs: 30_000, what: 'kubelet-client-current.pem' });
    expect(lstatSync(join(pki, 'kubelet-client-current.pem')).isSymbolicLink()).toBe(true);
    expect(pairFiles()).toHaveLength(1);
    expect(currentTarget()).toBe(join(pki, pairFiles()[0]));
    expect(statSync(currentTarget()!).mode & 0o777).toBe(0o600);
    const text = readFileSync(currentTarget()!, 'utf8');
    expect(text).toMatch(
      /^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\n-----BEGIN EC PRIVATE KEY-----/,
    );
    await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node' });
    const create = api.requests.find((r) => r.method === 'POST' && r.path === '/api/v1/nodes');
    expect(create).toMatchObject({
      user: `system:node:${NODE}`,
      status: 201,
      clientCert: fingerprintOf(currentTarget()!),
    });
    await waitFor(() => api.object('pods', 'kube-system', `sleeper-${NODE}`), {
      timeoutMs: 30_000,
      what: 'the mirror pod',
    });
  });

  it('kept the static pod running the whole time', async () => {
    expect(await runningSleeper()).toBe(sleeperContainer);
    expect((await h.pods('sleeper'))[0]!.containers.every((c) => c.meta.restartCount === 0)).toBe(true);
  });

  it("rotates the short-lived certificate with the node's own credentials over the node's one connection, and uses the new one", async () => {
    const first = currentTarget()!;
    const firstFp = fingerprintOf(first);
    const user = `system:node:${NODE}`;
    const connectionsBefore = api.connections.length;
    await waitFor(() => pairFiles().length >= 2 && currentTarget() !== first, {
      timeoutMs: 90_000,
      what: 'a rotated pair',
    });
    const renewal = csrs().find((c) => c.spec.username === user);
    expect(renewal?.metadata.name).toMatch(/^csr-/);
    expect(renewal?.status.conditions?.[0]?.type).toBe('Approved');
    const next = fingerprintOf(currentTarget()!);
    expect(next).not.toBe(firstFp);
    const since = api.requests.length;
    await waitFor(
      () => api.requests.slice(since).find((r) => r.clientCert === next && r.user === user && r.status === 200),
      { timeoutMs: 30_000, what: 'a request with the new certificate' },
    );
    // The renewal was filed and watched on the connection the node's lease renewals use, with the old pair.
    const filed = api.requests.filter(
      (r) =>
        r.method === 'POST' && r.path === '/apis/certificates.k8s.io/v1/certificatesigningrequests' && r.user === user,
    );
    expect(filed).toHaveLength(1);
    const nodeConnections = new Set(
      api.requests
        .filter((r) => r.clientCert === firstFp && r.path.startsWith('/apis/coordination.k8s.io/'))
        .map((r) => r.connection),
    );
    expect(nodeConnections.has(filed[0]!.connection)).toBe(true);
    expect(
      api.requests
        .filter((r) => r.path.startsWith('/apis/certificates.k8s.io/') && r.user === user)
        .every((r) => nodeConnections.has(r.connection)),
    ).toBe(true);
    // The rotation opened one connection: the switch to the new pair.
    const opened = api.connections.slice(connectionsBefore);
    console.log(
      `connections opened by one rotation: ${opened.length} (${opened.map((c) => (c.clientCert === next ? 'new pair' : c.clientCert === firstFp ? 'old pair' : 'other')).join(', ')})`,
    );
    expect(opened.map((c) => c.clientCert)).toEqual([next]);
    // The old connection closes once the switch is made (its watches end and are opened again on the new one).
    const oldConnection = api.connections.find((c) => c.id === filed[0]!.connection)!;
    await waitFor(() => oldConnection.closedAt !== undefined, {
      timeoutMs: 30_000,
      what: 'the connection of the old pair to close',
    });
    await waitFor(
      () =>
        api.requests.find(
          (r) => r.clientCert === next && r.path === '/api/v1/pods' && /(^|&)watch=(1|true)/.test(r.query),
        ),
      { timeoutMs: 30_000, what: 'the pods watch on the new connection' },
    );
    expect(await runningSleeper()).toBe(sleeperContainer);
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${h.agent().proc.pid}/status`, 'utf8'))?.[1];
    console.log(`agent RSS after bootstrap and one rotation: ${Math.round(Number(rss) / 1024)} MiB`);
  });

  it("without rotation and without a kubeconfig, bootstraps after a restart with the kubelet's node-csr-<digest> request", async () => {
    await h.agent().kill('SIGTERM');
    rmSync(kubeconfig);
    rmSync(pki, { recursive: true });
    api.configureSigner({ ttlSeconds: 3600 });
    const agent = h.launch({
      extraArgs: [`--kubeconfig=${kubeconfig}`, `--bootstrap-kubeconfig=${bootstrapKubeconfig}`],
    });
    const filed = await waitFor(() => csrs().find((c) => c.metadata.name.startsWith('node-csr-')), {
      timeoutMs: 30_000,
      what: 'the node-csr request',
    });
    expect(filed.metadata.name).toMatch(/^node-csr-[A-Za-z0-9_-]{43}$/);
    expect(existsSync(join(pki, 'kubelet-client.key.tmp'))).toBe(true);
    expect(existsSync(kubeconfig)).toBe(false);
    await kubectl.ok(['certificate', 'approve', filed.metadata.name]);
    await agent.waitForLog(
      (r) => r.msg === 'Client certificate bootstrapped; kubeconfig written',
      'the bootstrap done',
      30_000,
    );
    expect(existsSync(join(pki, 'kubelet-client.key.tmp'))).toBe(false);
    const since = api.requests.length;
    const fp = fingerprintOf(join(pki, 'kubelet-client-current.pem'));
    await waitFor(
      () =>
        api.requests
          .slice(since)
          .find((r) => r.clientCert === fp && r.user === `system:node:${NODE}` && r.status === 200),
      { timeoutMs: 30_000, what: 'the node talking with the bootstrapped certificate' },
    );
    expect(await runningSleeper()).toBe(sleeperContainer);
  });
});
