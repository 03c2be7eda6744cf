// The kubelet API of the packaged agent on the real containerd, as kubeadm configures it (client CA
// = the cluster CA, TokenReview, Webhook authorization, no anonymous), driven by real kubectls
// (Debian sid's 1.36, and the machine's own older one when it has one) through the fake API server (which proxies pods/log, exec, attach and portforward to the
// node with its kube-apiserver-kubelet-client certificate, and serves metrics.k8s.io from the
// node's /metrics/resource), plus direct requests for the 401/403 paths and bad input.
import { request as httpRequest } from 'node:http';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { FakeApiServer } from '../../support/fake-apiserver/index.js';
import { createPki } from '../../support/fake-apiserver/pki.js';
import { httpsGet } from '../../support/https-get.js';
import { webSocketExec } from '../../support/websocket-client.js';
import { freePorts } from '../../support/ports.js';
import { busyboxPod } from '../../support/busybox-pod.js';
import { waitFor } from '../../support/wait.js';
import { MACHINE_KUBECTL, machineKubectl } from '../../../dev/kubectl.js';
import { Kubectl, KUBECTL } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from '../agent/harness.js';
import { startKubeletApiNode } from '../agent/kubelet-api-node.js';

const NODE = 'kapi-e2e';
const h = useAgentHarness('kapi', NODE);
let api: FakeApiServer;
let kubectl: Kubectl;
let adminKubeconfig: string;
let kubeletPort: number;
let httpPort: number;
let base: string;

// Debian's kubectl, and whatever older client the machine has (these machines: google-cloud-sdk's 1.32).
const machine = machineKubectl();
if (!machine) console.warn(`skipping the kubelet API tests with the machine's kubectl: ${MACHINE_KUBECTL} is missing`);
const CLIENTS: { name: string; binary: string | undefined }[] = [
  { name: "Debian sid's kubectl", binary: KUBECTL },
  { name: `the machine's ${MACHINE_KUBECTL}`, binary: machine },
];

const TALKER = `talker-${NODE}`;
const CRASHER = `crasher-${NODE}`;
const WEB = `web-${NODE}`;

async function running(name: string): Promise<boolean> {
  return (await h.pods(name)).some((p) => p.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING));
}

beforeAll(async () => {
  [httpPort] = await freePorts(1);
  h.write(
    'talker.yaml',
    busyboxPod('talker', 'i=0; while true; do echo line-$i; echo err-$i >&2; i=$((i+1)); sleep 0.2; done'),
  );
  h.write('crasher.yaml', busyboxPod('crasher', 'echo "run at $(date +%s)"; sleep 1; exit 3'));
  h.write(
    'web.yaml',
    busyboxPod(
      'web',
      `mkdir -p /tmp/www && echo hello-through-port-forward > /tmp/www/index.html && exec httpd -f -p 127.0.0.1:${httpPort} -h /tmp/www`,
    ),
  );
  ({ api, kubeletPort, adminKubeconfig, admin: kubectl } = await startKubeletApiNode(h, { authorizerCaches: true }));
  base = `https://127.0.0.1:${kubeletPort}`;
  await waitFor(() => api.object('pods', 'kube-system', TALKER), { timeoutMs: 60_000, what: 'the talker mirror pod' });
  await waitFor(async () => (await running('talker')) && (await running('web')), {
    timeoutMs: 60_000,
    what: 'talker and web running',
  });
});

let failed = false;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failed = true;
});

afterAll(async () => {
  if (failed || process.env.SHOW_AGENT_LOG) console.log(`agent log:\n${h.agent().lines.slice(-60).join('\n')}`);
  await api?.dispose();
});

describe('the kubelet API', () => {
  it('an ordinary start (no tlsCertFile: the self-signed pair is made first) logs no error or warning about serving', async () => {
    await h.agent().waitForLog((r) => r.msg === 'Serving the kubelet API', 'the kubelet API served', 60_000);
    const serving = h
      .agent()
      .records()
      .filter((r) => /serv/i.test(String(r.msg)) && (r.severity === 'warning' || r.err !== undefined));
    expect(serving).toEqual([]);
    expect(
      h
        .agent()
        .records()
        .some((r) => r.msg === 'Generated a self-signed serving certificate'),
    ).toBe(true);
  });
});

for (const client of CLIENTS) {
  describe.skipIf(client.binary === undefined)(`${client.name} against the kubelet API`, () => {
    let kubectl: Kubectl;
    beforeAll(() => {
      kubectl = new Kubectl(adminKubeconfig, h.dir, client.binary);
    });

    it('kubectl logs and --tail read the CRI log through the API server and the kubelet API', async () => {
      const mark = api.requests.length;
      await waitFor(async () => (await kubectl.ok(['logs', '-n', 'kube-system', TALKER])).includes('line-5'), {
        timeoutMs: 30_000,
        what: 'five lines logged',
      });
      const tail = await kubectl.ok(['logs', '-n', 'kube-system', TALKER, '--tail=4']);
      const lines = tail.trimEnd().split('\n');
      expect(lines).toHaveLength(4);
      // stdout and stderr both, in the order written.
      expect(lines.every((l) => /^(line|err)-\d+$/.test(l))).toBe(true);
      const stamped = await kubectl.ok(['logs', '-n', 'kube-system', TALKER, '--tail=1', '--timestamps']);
      expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (line|err)-\d+\n$/);
      const limited = await kubectl.ok(['logs', '-n', 'kube-system', TALKER, '--limit-bytes=7']);
      expect(limited).toHaveLength(7);
      expect((await kubectl.ok(['logs', '-n', 'kube-system', TALKER])).startsWith(limited)).toBe(true);
      const proxied = api.requests.slice(mark).filter((r) => r.path.endsWith(`/pods/${TALKER}/log`));
      expect(proxied.length).toBeGreaterThanOrEqual(4);
      expect(proxied.filter((r) => r.status >= 400).map((r) => [r.path, r.query, r.status, r.user])).toEqual([]);
    });

    it('kubectl logs -f follows new lines', async () => {
      const follow = kubectl.start(['logs', '-f', '-n', 'kube-system', TALKER, '--tail=1']);
      const seen = await waitFor(
        () => follow.stdout.split('\n').filter((l) => l.startsWith('line-')).length >= 5 && follow.stdout,
        { timeoutMs: 30_000, what: 'five followed lines' },
      );
      const numbers = seen
        .split('\n')
        .filter((l) => l.startsWith('line-'))
        .map((l) => Number(l.slice(5)));
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      await follow.stop();
    });

    it('kubectl logs --previous shows the run before the restart', async () => {
      await waitFor(async () => (await h.pods('crasher'))[0]?.containers.some((c) => c.meta.restartCount >= 1), {
        timeoutMs: 60_000,
        what: 'the crasher restarted',
      });
      const previous = await waitFor(
        async () => {
          const r = await kubectl.run(['logs', '-n', 'kube-system', CRASHER, '--previous']);
          return r.code === 0 && r.stdout.startsWith('run at ') && r.stdout;
        },
        { timeoutMs: 60_000, what: "the previous run's log" },
      );
      expect(previous).toMatch(/^run at \d+\n$/);
      const missing = await kubectl.run(['logs', '-n', 'kube-system', TALKER, '--previous']);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('previous terminated container "main" in pod "talker-kapi-e2e" not found');
    });

    it('kubectl exec runs a command, with its exit code, and with stdin', async () => {
      expect(await kubectl.ok(['exec', '-n', 'kube-system', TALKER, '--', 'sh', '-c', 'echo out; echo err >&2'])).toBe(
        'out\n',
      );
      const failing = await kubectl.run(['exec', '-n', 'kube-system', TALKER, '--', 'sh', '-c', 'exit 7']);
      expect(failing.code).toBe(7);
      const interactive = await kubectl.ok(
        ['exec', '-i', '-n', 'kube-system', TALKER, '--', 'sh', '-c', 'read a; read b; echo "got $a and $b"'],
        60_000,
        'hello\nworld\n',
      );
      expect(interactive).toBe('got hello and world\n');
      expect(await kubectl.ok(['exec', '-n', 'kube-system', TALKER, '--', 'true'])).toBe('');
      const upgrades = api.requests.filter((r) => r.path.endsWith(`/pods/${TALKER}/exec`));
      // kubectl (1.32, 1.36) tries WebSocket (v5.channel.k8s.io) first; the runtime answers with SPDY only, kubectl falls back.
      expect(upgrades.some((r) => r.status === 101 && /SPDY/i.test(r.protocol))).toBe(true);
    });

    it('kubectl attach streams what the running container writes', async () => {
      const attach = kubectl.start(['attach', '-n', 'kube-system', TALKER]);
      await waitFor(() => /line-\d+\n/.test(attach.stdout), { timeoutMs: 30_000, what: 'attached output' });
      await attach.stop();
      expect(api.requests.some((r) => r.path.endsWith(`/pods/${TALKER}/attach`) && r.status === 101)).toBe(true);
    });

    it('WebSocket where the runtime accepts it: an exec with v4.channel.k8s.io is proxied as is', async () => {
      const admin = api.kubeletClientCert;
      const frames = await webSocketExec(
        `127.0.0.1`,
        kubeletPort,
        `/exec/kube-system/${TALKER}/main?command=echo&command=via-websocket&output=1&error=1`,
        { cert: admin.certPem, key: admin.keyPem },
        'v4.channel.k8s.io',
      );
      expect(frames.protocol).toBe('v4.channel.k8s.io');
      expect(frames.channels[1]).toBe('via-websocket\n');
      expect(JSON.parse(frames.channels[3] ?? '{}')).toMatchObject({ status: 'Success' });
    });

    it('kubectl port-forward forwards a local port to the pod, and a request goes through', async () => {
      const [local] = await freePorts(1);
      const pf = kubectl.start(['port-forward', '-n', 'kube-system', `pod/${WEB}`, `${local}:${httpPort}`]);
      await waitFor(() => pf.stdout.includes('Forwarding from'), { timeoutMs: 30_000, what: 'port-forward ready' });
      const body = await waitFor(
        () =>
          new Promise<string>((resolve, reject) => {
            httpRequest({ host: '127.0.0.1', port: local, path: '/', agent: false }, (res) => {
              let b = '';
              res.on('data', (c: Buffer) => (b += c.toString()));
              res.on('end', () => resolve(b));
            })
              .on('error', reject)
              .end();
          }),
        { timeoutMs: 30_000, what: 'an HTTP answer through the forwarded port' },
      );
      expect(body).toBe('hello-through-port-forward\n');
      await pf.stop();
    });

    it('kubectl top shows CPU and memory of the node and the pods (metrics from /metrics/resource)', async () => {
      const pods = await kubectl.ok(['top', 'pod', '-n', 'kube-system'], 90_000);
      expect(pods).toMatch(/NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
      expect(pods).toMatch(new RegExp(`${TALKER}\\s+\\d+m\\s+\\d+Mi`));
      const node = await kubectl.ok(['top', 'node'], 90_000);
      expect(node).toMatch(new RegExp(`${NODE}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`));
    });
  });
}

describe('kubectl and a removed container', () => {
  it('kubectl logs -f ends when the container is removed', async () => {
    const follow = kubectl.start(['logs', '-f', '-n', 'kube-system', TALKER, '--tail=0']);
    await waitFor(() => follow.stdout.includes('line-'), { timeoutMs: 30_000, what: 'the follower streaming' });
    h.remove('talker.yaml');
    const code = await Promise.race([
      follow.done,
      new Promise<string>((r) => setTimeout(() => r('still running'), 60_000)),
    ]);
    expect(code).toBe(0);
  });
});

describe('authentication and authorization of the kubelet API', () => {
  const viewer = (): { cert: string; key: string } => {
    const c = api.issueClientCert('viewer', ['viewers']);
    return { cert: c.certPem, key: c.keyPem };
  };

  it('answers 401 without credentials, with a certificate from another CA, and with an unknown token', async () => {
    expect((await httpsGet(`${base}/pods`)).status).toBe(401);
    const otherDir = join(h.dir, 'other-ca');
    mkdirSync(otherDir, { recursive: true });
    const other = createPki(otherDir);
    const stranger = other.issueClientCert('system:admin', ['system:masters']);
    const r = await httpsGet(`${base}/pods`, { cert: stranger.certPem, key: stranger.keyPem });
    expect(r).toMatchObject({ status: 401, body: 'Unauthorized' });
    expect((await httpsGet(`${base}/pods`, { token: 'not-a-token' })).status).toBe(401);
  });

  it('answers 403 to an authenticated user without rights, and tells nothing about which pods exist', async () => {
    const v = viewer();
    const pods = await httpsGet(`${base}/pods`, v);
    expect(pods.status).toBe(403);
    expect(pods.body).toBe('Forbidden (user=viewer, verb=get, resource=nodes, subresource(s)=[pods proxy])\n');
    const real = await httpsGet(`${base}/containerLogs/kube-system/${WEB}/main`, v);
    const made_up = await httpsGet(`${base}/containerLogs/kube-system/no-such-pod/main`, v);
    expect(real.status).toBe(403);
    expect(made_up).toEqual({ ...real, headers: made_up.headers });
    const sar = api.reviews.filter((x) => x.kind === 'SubjectAccessReview' && (x.spec.user as string) === 'viewer');
    expect(sar.map((x) => (x.spec.resourceAttributes as { subresource: string }).subresource)).toEqual(
      expect.arrayContaining(['pods', 'proxy']),
    );
    expect(sar.every((x) => x.by === `system:node:${NODE}`)).toBe(true);
  });

  it('lets through what SubjectAccessReview allows: nodes/stats for /stats, nodes/proxy for logs, and a bearer token via TokenReview', async () => {
    api.grant('stats-reader', 'nodes/stats', ['get']);
    const c = api.issueClientCert('stats-reader', []);
    const summary = await httpsGet(`${base}/stats/summary`, { cert: c.certPem, key: c.keyPem });
    expect(summary.status).toBe(200);
    const doc = JSON.parse(summary.body) as {
      node: {
        nodeName: string;
        memory: { workingSetBytes: number };
        runtime?: { imageFs?: Record<string, number>; containerFs?: Record<string, number> };
      };
      pods: { podRef: { name: string } }[];
    };
    expect(doc.node.nodeName).toBe(NODE);
    expect(doc.node.memory.workingSetBytes).toBeGreaterThan(0);
    // The runtime's image filesystem (CRI ImageFsInfo): its bytes as the runtime counts them, the
    // filesystem's size and free space beside them; the container filesystem is the same one.
    const [imageFsInfo] = (await h.cri().images.imageFsInfo()).imageFilesystems;
    const imageFs = doc.node.runtime?.imageFs;
    expect(imageFs?.usedBytes).toBeGreaterThan(0);
    expect(imageFs?.usedBytes).toBeLessThanOrEqual(imageFs?.capacityBytes ?? 0);
    expect(imageFs?.availableBytes).toBeGreaterThan(0);
    expect(imageFs?.inodes).toBeGreaterThan(0);
    expect(imageFsInfo?.usedBytes?.value).toBeGreaterThan(0);
    expect(doc.node.runtime?.containerFs).toEqual(imageFs);
    expect(doc.pods.map((p) => p.podRef.name)).toContain(WEB);
    expect((await httpsGet(`${base}/pods`, { cert: c.certPem, key: c.keyPem })).status).toBe(403);
    api.addToken('reader-token', 'token-reader', ['readers']);
    api.grant('readers', 'nodes/proxy', ['get']);
    const logs = await httpsGet(`${base}/containerLogs/kube-system/${WEB}/main`, { token: 'reader-token' });
    expect(logs.status).toBe(200);
    expect(api.reviews.some((x) => x.kind === 'TokenReview' && x.allowed)).toBe(true);
    // The reviews went over the node's one connection, the one its lease and statuses use (issue 20).
    const byNode = api.requests.filter((r) => r.user === `system:node:${NODE}`);
    const reviewConnections = new Set(byNode.filter((r) => r.path.endsWith('reviews')).map((r) => r.connection));
    const leaseConnections = new Set(byNode.filter((r) => r.path.includes('/leases/')).map((r) => r.connection));
    expect(reviewConnections.size).toBeGreaterThan(0);
    expect([...reviewConnections].every((c) => leaseConnections.has(c))).toBe(true);
  });

  it('exec over a WebSocket GET is authorized as create on nodes/proxy: get alone is refused (bootlet differs from the kubelet here)', async () => {
    api.grant('proxy-getter', 'nodes/proxy', ['get']);
    api.grant('proxy-creator', 'nodes/proxy', ['create']);
    const path = `/exec/kube-system/${WEB}/main?command=echo&command=via-websocket&output=1&error=1`;
    const as = (user: string) => {
      const c = api.issueClientCert(user, []);
      return { cert: c.certPem, key: c.keyPem };
    };
    const refused = await webSocketExec('127.0.0.1', kubeletPort, path, as('proxy-getter'), 'v4.channel.k8s.io');
    expect(refused.status).toBe(403);
    const asked = api.reviews
      .filter((x) => x.kind === 'SubjectAccessReview' && (x.spec.user as string) === 'proxy-getter')
      .map((x) => x.spec.resourceAttributes as { verb: string; subresource: string });
    expect(asked).toEqual([expect.objectContaining({ verb: 'create', subresource: 'proxy' })]);
    const allowed = await webSocketExec('127.0.0.1', kubeletPort, path, as('proxy-creator'), 'v4.channel.k8s.io');
    expect(allowed.status).toBe(101);
    expect(allowed.channels[1]).toBe('via-websocket\n');
  });

  it('parses paths strictly and validates queries: 404 for unknown pods and containers, 400/422 for bad values', async () => {
    const admin = api.kubeletClientCert;
    const as = { cert: admin.certPem, key: admin.keyPem };
    const get = (p: string): Promise<{ status: number; body: string }> => httpsGet(`${base}${p}`, as);
    expect((await get(`/containerLogs/kube-system/no-such-pod/main`)).status).toBe(404);
    expect(await get(`/containerLogs/kube-system/${WEB}/nope`)).toMatchObject({
      status: 404,
      body: `container "nope" not found in pod "${WEB}"`,
    });
    expect((await get(`/containerLogs/kube-system/${WEB}/main?tailLines=-1`)).status).toBe(422);
    expect((await get(`/containerLogs/kube-system/${WEB}/main?tailLines=ten`)).status).toBe(400);
    expect(
      (await get(`/containerLogs/kube-system/${WEB}/main?sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z`)).status,
    ).toBe(422);
    expect((await get(`/containerLogs/kube-system/${WEB}/main/extra`)).status).toBe(404);
    expect((await get(`/containerLogs/kube-system/../${WEB}/main`)).status).toBe(404);
    expect((await get(`/containerLogs/kube-system/${WEB.toUpperCase()}/main`)).status).toBe(404);
    expect((await get(`/exec/kube-system/${WEB}/main?command=true&output=1`)).status).toBe(400);
    expect((await get('/healthz')).body).toBe('ok');
    expect(JSON.parse((await get('/configz')).body)).toMatchObject({
      kubeletconfig: { port: kubeletPort, authorization: { mode: 'Webhook' } },
    });
    expect((await get('/metrics/resource')).body).toMatch(
      new RegExp(
        `container_memory_working_set_bytes\\{container="main",namespace="kube-system",pod="${WEB}"\\} \\d+ \\d+`,
      ),
    );
  });

  it('serves a self-signed certificate it made in <cert-dir>/kubelet.crt for the node name and IP', async () => {
    const file = readFileSync(join(h.rootDir, 'pki', 'kubelet.crt'), 'utf8');
    const [leaf, ca] = file.split(/(?<=-----END CERTIFICATE-----\n)/).map((p) => new X509Certificate(p));
    expect(leaf!.verify(ca!.publicKey)).toBe(true);
    expect(leaf!.subject).toMatch(new RegExp(`^CN=${NODE}@\\d+$`));
    expect(leaf!.subjectAltName).toBe(`DNS:${NODE}, IP Address:127.0.0.1`);
    expect(statSync(join(h.rootDir, 'pki', 'kubelet.key')).mode & 0o777).toBe(0o600);
    const served = await new Promise<string>((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port: kubeletPort, rejectUnauthorized: false }, () => {
        resolve(s.getPeerX509Certificate()!.fingerprint256);
        s.destroy();
      }).on('error', reject);
    });
    expect(served).toBe(leaf!.fingerprint256);
  });

  it('while the API server is away, cached decisions for certificate users still work and new questions are refused', async () => {
    const admin = api.kubeletClientCert;
    const as = { cert: admin.certPem, key: admin.keyPem };
    expect((await httpsGet(`${base}/pods`, as)).status).toBe(200);
    await api.stop();
    try {
      expect((await httpsGet(`${base}/pods`, as)).status).toBe(200);
      const v = viewer();
      const r = await httpsGet(`${base}/healthz`, v);
      expect(r.status).toBe(500);
      expect(r.body).toBe('Authorization error (user=viewer, verb=get, resource=nodes, subresource=healthz)');
    } finally {
      await api.start();
    }
  });
});
