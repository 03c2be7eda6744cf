// Hostile clients against the packaged agent (issue 31, findings 2 and 3), measured from outside:
// - a tenant's pull secret whose key is `*a*a*a…*b.io`, for an image from a 200-character host: the
//   keyring's regular expression once took the agent's event loop for good; /healthz must keep
//   answering while the pod's pulls are tried (and fail: there is no registry);
// - 512 connections trickling a TLS handshake and 512 requests announcing a body that never comes,
//   from another address, each reopened when the agent closes it: an authorized `kubectl logs`
//   through the API server's proxy must keep working.
import { get as httpGet } from 'node:http';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { busyboxPod } from '../../support/busybox-pod.js';
import { startFloodProcess, type FloodProcess } from '../../support/connection-flood.js';
import type { FakeApiServer } from '../../support/fake-apiserver/index.js';
import { httpsGet } from '../../support/https-get.js';
import { freePorts } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from '../agent/harness.js';
import { startKubeletApiNode } from '../agent/kubelet-api-node.js';

const NODE = 'hostile-e2e';
const h = useAgentHarness('hostile-clients', NODE);
const TALKER = `talker-${NODE}`;
let api: FakeApiServer;
let kubectl: Kubectl;
let kubeletPort: number;
let healthzPort: number;
const floods: FloodProcess[] = [];

/** The agent's CPU time so far, in ms (utime + stime of /proc/<pid>/stat, at 100 ticks a second). */
function agentCpuMs(): number {
  const stat = readFileSync(`/proc/${h.agent().proc.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One GET /healthz on the agent's healthz port: its latency, or a failure after 5 s. */
function healthz(): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: '127.0.0.1', port: healthzPort, path: '/healthz', agent: false }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve(performance.now() - start) : reject(new Error(`healthz ${res.statusCode}`)),
      );
    });
    req.setTimeout(5_000, () => req.destroy(new Error('healthz did not answer within 5 s')));
    req.on('error', reject);
  });
}

beforeAll(async () => {
  [healthzPort] = await freePorts(1);
  h.write('talker.yaml', busyboxPod('talker', 'i=0; while true; do echo line-$i; i=$((i+1)); sleep 0.2; done'));
  ({
    api,
    kubeletPort,
    admin: kubectl,
  } = await startKubeletApiNode(h, {
    config: [`healthzPort: ${healthzPort}`],
    agent: { healthzPort },
  }));
  await waitFor(
    async () =>
      (await h.pods('talker')).some((p) => p.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING)),
    { timeoutMs: 60_000, what: 'the talker running' },
  );
  await h.agent().waitForLog((r) => r.msg === 'Serving the kubelet API', 'the kubelet API served', 60_000);
});

let failed = false;
afterEach(async (ctx) => {
  await Promise.all(floods.splice(0).map((f) => f.stop()));
  if (ctx.task.result?.state === 'fail') failed = true;
});

afterAll(async () => {
  await Promise.all(floods.splice(0).map((f) => f.stop()));
  if (failed || process.env.SHOW_AGENT_LOG) console.log(`agent log:\n${h.agent().lines.slice(-60).join('\n')}`);
  await api?.dispose();
});

describe('a hostile pull secret', () => {
  it('/healthz keeps answering while a pod with a *a*a…*b.io pull secret and an image from a 200-character host is pulled again and again', async () => {
    const baseline: number[] = [];
    for (let i = 0; i < 100; i++) baseline.push(await healthz());
    baseline.sort((a, b) => a - b);
    const hostileKey = `${'*a'.repeat(40)}*b.io`;
    const image = `${'a'.repeat(200)}.io/app:1`;
    api.seedObject('secrets', {
      metadata: { name: 'hostile', namespace: 'default' },
      type: 'kubernetes.io/dockerconfigjson',
      data: {
        '.dockerconfigjson': Buffer.from(
          JSON.stringify({ auths: { [hostileKey]: { auth: Buffer.from('u:p').toString('base64') } } }),
        ).toString('base64'),
      },
    });
    api.seedObject('pods', {
      metadata: { name: 'pulls-hostile', namespace: 'default' },
      spec: {
        nodeName: NODE,
        // The test's containerd has no pod network: a host-network pod gets as far as the pull.
        hostNetwork: true,
        imagePullSecrets: [{ name: 'hostile' }],
        containers: [{ name: 'main', image, imagePullPolicy: 'Always' }],
      },
    });
    const pullFailures = () =>
      h
        .agent()
        .records()
        .filter((r) => r.msg === 'Failed to start container' && r.reason === 'ErrImagePull' && r.container === 'main')
        .length;
    // Every 50 ms until the pod's image has failed twice (the first try and the one after the 10 s back-off).
    const latencies: number[] = [];
    const deadline = Date.now() + 90_000;
    while (pullFailures() < 2) {
      if (Date.now() > deadline) throw new Error(`only ${pullFailures()} pull attempts in 90 s`);
      latencies.push(await healthz());
      await new Promise((r) => setTimeout(r, 50));
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    console.log(
      `healthz before the pod: p50 ${percentile(baseline, 50).toFixed(1)} ms, p99 ${percentile(baseline, 99).toFixed(1)} ms; ` +
        `through the hostile pull secret: ${latencies.length} requests, p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`,
    );
    // The pulls went through the keyring: the node read the secret, and the agent said nothing of failing to.
    expect(
      api.requests.some(
        (r) =>
          r.user === `system:node:${NODE}` &&
          r.path.startsWith('/api/v1/namespaces/default/secrets') &&
          (r.path.endsWith('/hostile') || r.query.includes('hostile')) &&
          r.status === 200,
      ),
    ).toBe(true);
    expect(
      h
        .agent()
        .records()
        .filter((r) => r.msg === 'Unable to retrieve pull secret, the image pull may not succeed.'),
    ).toEqual([]);
    const status = api.object('pods', 'default', 'pulls-hostile')?.status as
      { containerStatuses?: { state?: { waiting?: { reason?: string } } }[] } | undefined;
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(status?.containerStatuses?.[0]?.state?.waiting?.reason);
  });
});

describe('hostile connections to the kubelet API', () => {
  async function timedLogs(): Promise<number> {
    const start = performance.now();
    const out = await kubectl.ok(['logs', '-n', 'kube-system', TALKER, '--tail=2'], 60_000);
    expect(out).toMatch(/^line-\d+\nline-\d+\n$/);
    return performance.now() - start;
  }

  it('an authorized kubectl logs works while 512 connections trickle a TLS handshake and 512 requests wait on a body that never comes', async () => {
    const before = [await timedLogs(), await timedLogs(), await timedLogs()];
    const cpuBefore = agentCpuMs();
    const t0 = Date.now();
    // From another address, as from another host; each in a process of its own.
    const trickle = startFloodProcess({
      host: '127.0.0.1',
      port: kubeletPort,
      kind: 'tls-trickle',
      size: 512,
      localAddress: '127.0.0.2',
      reopenMs: 1_000,
    });
    const bodies = startFloodProcess({
      host: '127.0.0.1',
      port: kubeletPort,
      kind: 'body-never-sent',
      size: 512,
      localAddress: '127.0.0.2',
      reopenMs: 2_000,
    });
    floods.push(trickle, bodies);
    // Each of the 1024 has been opened (an agent that never cuts them has every slot taken by now).
    await waitFor(() => trickle.counts().opened >= 512 && bodies.counts().opened >= 512, {
      timeoutMs: 60_000,
      what: 'both floods under way',
    });
    // Until each flood has tried 10 × 512 connections (their reopening included), and at least 5 times.
    const during: number[] = [];
    while (during.length < 5 || trickle.counts().opened < 5120 || bodies.counts().opened < 5120) {
      during.push(await timedLogs());
      if (Date.now() - t0 > 300_000) throw new Error('the floods did not reach 10 × 512 attempts in 5 minutes');
    }
    const sortedDuring = [...during].sort((x, y) => x - y);
    const admin = api.kubeletClientCert;
    expect(
      (await httpsGet(`https://127.0.0.1:${kubeletPort}/healthz`, { cert: admin.certPem, key: admin.keyPem })).body,
    ).toBe('ok');
    const seconds = (Date.now() - t0) / 1000;
    const cpu = (agentCpuMs() - cpuBefore) / 1000;
    floods.splice(0);
    const [t, b] = await Promise.all([trickle.stop(), bodies.stop()]);
    expect(t.closed).toBeGreaterThan(0);
    expect(b.closed).toBeGreaterThan(0);
    console.log(
      `kubectl logs: ${before.map((t) => t.toFixed(0)).join(', ')} ms before; under the floods ${during.length} runs, ` +
        `p50 ${percentile(sortedDuring, 50).toFixed(0)} ms, max ${sortedDuring.at(-1)!.toFixed(0)} ms. ` +
        `Floods over ${seconds.toFixed(1)} s: trickling handshakes opened ${t.opened} (at most ${t.mostOpen} open at once, ${t.closed} closed by the agent), ` +
        `bodies never sent opened ${b.opened} (at most ${b.mostOpen} open, ${b.closed} closed); agent CPU ${cpu.toFixed(1)} s`,
    );
    // Each kind of cut is one line, then counted: a flood of hundreds is a handful of lines.
    const lines = (msg: string) =>
      h
        .agent()
        .records()
        .filter((r) => r.msg === msg).length;
    expect(
      lines(
        'Closed the oldest unauthenticated kubelet API connection of the busiest source: too many connections have not authenticated',
      ),
    ).toBeLessThanOrEqual(3);
    expect(lines('Closed a kubelet API connection that did not finish its TLS handshake in time')).toBeLessThanOrEqual(
      3,
    );
  });
});
