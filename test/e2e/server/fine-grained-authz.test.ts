// Fine-grained kubelet API authorization (KEP-2862, GA in 1.36) on the packaged agent, as kubeadm
// configures the kubelet API (TokenReview, Webhook authorization through the fake API server's
// SubjectAccessReview, which answers from api.grant rules). The real kubectl 1.36 (Debian sid's)
// talks to the kubelet directly, as a monitoring agent with a service account token does, and
// through the API server's node proxy, which authorizes nodes/proxy for its caller itself.
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { FakeApiServer } from '../../support/fake-apiserver/index.js';
import { busyboxPod } from '../../support/busybox-pod.js';
import { httpsGet } from '../../support/https-get.js';
import { waitFor } from '../../support/wait.js';
import { webSocketExec } from '../../support/websocket-client.js';
import { useAgentHarness } from '../agent/harness.js';
import { Kubectl, KUBECTL } from '../fake-apiserver/kubectl.js';
import { startKubeletApiNode } from '../agent/kubelet-api-node.js';

const NODE = 'authz-e2e';
const TALKER = `talker-${NODE}`;
const h = useAgentHarness('fine-authz', NODE);
let api: FakeApiServer;
let kubeletPort: number;
let admin: Kubectl;
/** kubectl 1.36 straight at the kubelet, as `user` with a bearer token the kubelet reviews (group monitoring). */
let atKubelet: (user: string, token: string) => Kubectl;

/** The subresources the kubelet asked the API server about for `user`, with the answers, in order. */
function asked(user: string): string[] {
  return api.reviews
    .filter((r) => r.kind === 'SubjectAccessReview' && r.spec.user === user)
    .map((r) => {
      const a = r.spec.resourceAttributes as { verb: string; subresource: string };
      return `${a.verb} nodes/${a.subresource}: ${r.allowed ? 'allowed' : 'denied'}`;
    });
}

beforeAll(async () => {
  h.write('talker.yaml', busyboxPod('talker', 'while true; do echo tick; sleep 1; done'));
  const node = await startKubeletApiNode(h, { authorizerCaches: true });
  ({ api, kubeletPort, admin } = node);
  atKubelet = (user, token) => node.atKubelet(user, token, ['monitoring']);
  await waitFor(() => api.object('pods', 'kube-system', TALKER), { timeoutMs: 60_000, what: 'the talker mirror pod' });
  await waitFor(
    async () =>
      (await h.pods('talker')).some((p) => p.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING)),
    { timeoutMs: 60_000, what: 'the talker running' },
  );
  await node.waitServing();
}, 300_000);

let failed = false;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failed = true;
});
afterAll(async () => {
  if (failed) console.log(`agent log:\n${h.agent().lines.slice(-60).join('\n')}`);
  await api?.dispose();
});

describe('a user granted only nodes/pods (kubectl 1.36 straight at the kubelet)', () => {
  let reader: Kubectl;
  beforeAll(() => {
    api.grant('pods-reader', 'nodes/pods', ['get']);
    reader = atKubelet('pods-reader', 'pods-reader-token');
  });

  it('reads /pods: the kubelet asked nodes/pods and, allowed, never nodes/proxy', async () => {
    const list = JSON.parse(await reader.ok(['get', '--raw', '/pods'])) as { items: { metadata: { name: string } }[] };
    expect(list.items.map((p) => p.metadata.name)).toContain(TALKER);
    expect(asked('pods-reader')).toEqual(['get nodes/pods: allowed']);
  });

  it('is refused exec, attach, port-forward and container logs, by GET, POST or an upgrade', async () => {
    const exec = `/exec/kube-system/${TALKER}/main?command=true&output=1`;
    const get = await reader.run(['get', '--raw', exec]);
    expect(get.code).not.toBe(0);
    // bootlet asks create for the streaming paths whatever the method (README, differs from the kubelet).
    expect(get.stderr).toContain('Forbidden (user=pods-reader, verb=create, resource=nodes, subresource(s)=[proxy])');
    const post = await reader.run(['create', '--raw', exec, '-f', '-'], 60_000, '');
    expect(post.code).not.toBe(0);
    expect(post.stderr).toContain('Forbidden (user=pods-reader, verb=create, resource=nodes, subresource(s)=[proxy])');
    for (const path of [
      `/attach/kube-system/${TALKER}/main?output=1`,
      `/portForward/kube-system/${TALKER}?port=80`,
      `/containerLogs/kube-system/${TALKER}/main`,
    ]) {
      const r = await reader.run(['get', '--raw', path]);
      expect(r.code, path).not.toBe(0);
      expect(r.stderr, path).toContain('subresource(s)=[proxy])');
    }
    // An upgrade as kubectl exec would make it, from a certificate user with the same one grant.
    const cert = api.issueClientCert('pods-reader', ['monitoring']);
    const ws = await webSocketExec(
      '127.0.0.1',
      kubeletPort,
      `/exec/kube-system/${TALKER}/main?command=echo&command=hi&output=1`,
      { cert: cert.certPem, key: cert.keyPem },
      'v4.channel.k8s.io',
    );
    expect(ws.status).toBe(403);
    expect(ws.channels[1] ?? '').not.toContain('hi');
  });

  it('is refused the other fine-grained endpoints and those of their own: healthz, configz, stats, metrics, logs', async () => {
    for (const [path, subresources] of [
      ['/healthz', 'healthz proxy'],
      ['/configz', 'configz proxy'],
      ['/stats/summary', 'stats'],
      ['/metrics', 'metrics'],
      ['/logs/', 'log'],
    ]) {
      const r = await reader.run(['get', '--raw', path!]);
      expect(r.code, path).not.toBe(0);
      expect(r.stderr, path).toContain(
        `Forbidden (user=pods-reader, verb=get, resource=nodes, subresource(s)=[${subresources}])`,
      );
    }
  });
});

describe('each fine-grained subresource opens its endpoint only, and nodes/proxy still opens them all', () => {
  it('nodes/healthz reads /healthz and not /configz; nodes/configz the other way round', async () => {
    api.grant('health-checker', 'nodes/healthz', ['get']);
    const health = atKubelet('health-checker', 'health-token');
    expect(await health.ok(['get', '--raw', '/healthz'])).toBe('ok');
    expect(await health.ok(['get', '--raw', '/healthz/ping'])).toBe('ok');
    expect((await health.run(['get', '--raw', '/configz'])).code).not.toBe(0);
    api.grant('config-reader', 'nodes/configz', ['get']);
    const config = atKubelet('config-reader', 'config-token');
    expect(JSON.parse(await config.ok(['get', '--raw', '/configz']))).toMatchObject({
      kubeletconfig: { port: kubeletPort },
    });
    expect((await config.run(['get', '--raw', '/healthz'])).code).not.toBe(0);
  });

  it('a role written for the coarse nodes/proxy keeps working: the kubelet falls back to proxy', async () => {
    api.grant('old-agent', 'nodes/proxy', ['get']);
    const old = atKubelet('old-agent', 'old-agent-token');
    expect(JSON.parse(await old.ok(['get', '--raw', '/pods'])).kind).toBe('PodList');
    expect(await old.ok(['get', '--raw', '/healthz'])).toBe('ok');
    // The second nodes/proxy answer is the cached first one (cacheAuthorizedTTL).
    expect(asked('old-agent')).toEqual([
      'get nodes/pods: denied',
      'get nodes/proxy: allowed',
      'get nodes/healthz: denied',
    ]);
  });
});

describe('through the API server (kubectl get --raw /api/v1/nodes/<node>/proxy/...)', () => {
  it('the API server authorizes nodes/proxy for its caller: a user with only nodes/pods is refused there', async () => {
    const via = new Kubectl(
      api.writeKubeconfig(join(h.dir, 'pods-reader.api.kubeconfig'), 'pods-reader', ['monitoring'], {
        token: 'pods-reader-token',
      }),
      h.dir,
      KUBECTL,
    );
    const r = await via.run(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/pods`]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      `nodes "${NODE}" is forbidden: User "pods-reader" cannot get resource "nodes/proxy" in API group "" at the cluster scope`,
    );
  });

  it('an admin reads /pods through it; the kubelet sees the API server client and asks nodes/pods first', async () => {
    const list = JSON.parse(await admin.ok(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/pods`])) as {
      items: { metadata: { name: string } }[];
    };
    expect(list.items.map((p) => p.metadata.name)).toContain(TALKER);
    expect(asked('kube-apiserver-kubelet-client')).toContain('get nodes/pods: allowed');
    expect(asked('kube-apiserver-kubelet-client')).not.toContain('get nodes/proxy: allowed');
  });

  it('the kubelet API answers direct requests of a certificate user granted nodes/pods the same way', async () => {
    api.grant('cert-pods-reader', 'nodes/pods', ['get']);
    const c = api.issueClientCert('cert-pods-reader', []);
    expect((await httpsGet(`https://127.0.0.1:${kubeletPort}/pods`, { cert: c.certPem, key: c.keyPem })).status).toBe(
      200,
    );
    expect(
      await httpsGet(`https://127.0.0.1:${kubeletPort}/exec/kube-system/${TALKER}/main?command=true`, {
        cert: c.certPem,
        key: c.keyPem,
      }),
    ).toMatchObject({
      status: 403,
      body: 'Forbidden (user=cert-pods-reader, verb=create, resource=nodes, subresource(s)=[proxy])\n',
    });
  });
});
