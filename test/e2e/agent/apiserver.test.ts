// The packaged agent with a real containerd and the fake API server, real kubectl as the
// operator: the server is absent at start, appears, goes away while a container crashes, comes
// back; mirror pods are deleted and edited by hand. The pods on the node never notice.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Lease } from 'kubernetes-types/coordination/v1';
import type { Node, Pod } from 'kubernetes-types/core/v1';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'cp-e2e';
const h = useAgentHarness('apiserver', NODE, { extraArgs: ['--v=2'] });
let api: FakeApiServer;
let kubectl: Kubectl;

const sleeper = (name: string, env = '1') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: kube-system, labels: {tier: control-plane}}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    env: [{name: EDITION, value: "${env}"}]
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;

const crasher = `apiVersion: v1
kind: Pod
metadata: {name: crasher, namespace: kube-system, annotations: {bootlet.io/crashloop-backoff-max-seconds: "1"}}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "test -f /data/crash && { rm /data/crash; exit 7; }; trap 'exit 0' TERM; while true; do test -f /data/crash && exit 7; sleep 0.2; done"]
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - {name: data, hostPath: {path: DATA, type: DirectoryOrCreate}}
`;

function mirror(name: string): Pod | undefined {
  return api.pod('kube-system', `${name}-${NODE}`);
}

function restartsOnServer(name: string): number | undefined {
  return mirror(name)?.status?.containerStatuses?.[0]?.restartCount;
}

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  const nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, [
    'system:nodes',
  ]);
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  await api.stop(); // not born yet: bootlet is what would start it
  h.write('sleeper.yaml', sleeper('sleeper'));
  h.write('crasher.yaml', crasher.replace('DATA', path.join(h.dir, 'crash-data')));
  h.launch({ extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`] });
});

let failed = false;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failed = true;
});

afterAll(async () => {
  // A red run shows what the agent said about the API server.
  if (failed || process.env.SHOW_AGENT_LOG) {
    const lines = h.agent().lines.filter((l) => l.includes('apiserver') || l.includes('"severity"'));
    console.log(`agent log (API side):\n${lines.slice(-80).join('\n')}`);
    const reqs = api.requests.filter(
      (r) => r.path.includes('sleeper') || (r.path.includes('/pods') && r.user !== `system:node:${NODE}`),
    );
    console.log(
      `API requests about the pods:\n${reqs.map((r) => `${r.method} ${r.path}?${r.query ?? ''} ${r.user} ${r.status} ${r.userAgent ?? ''}`).join('\n')}`,
    );
  }
  await api?.dispose();
});

describe('bootlet and the API server', () => {
  it('runs its pods with no API server at all', async () => {
    for (const name of ['sleeper', 'crasher']) {
      await waitFor(
        async () => (await h.pods(name))[0]?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING),
        {
          timeoutMs: 60_000,
          what: `${name} running with the API server away`,
        },
      );
    }
    expect(api.requests.length).toBe(0);
  });

  it('registers the node, its lease, mirror pods and statuses once the server appears', async () => {
    const t0 = Date.now();
    await api.start();
    await waitFor(
      () => mirror('sleeper')?.status?.phase === 'Running' && mirror('crasher')?.status?.phase === 'Running',
      {
        timeoutMs: 30_000,
        what: 'mirror pods with Running status',
      },
    );
    const converged = Date.now() - t0;
    console.log(`API server up → node, mirror pods and statuses in ${converged} ms`);
    const node = api.object('nodes', '', NODE) as unknown as Node;
    expect(node.metadata?.labels?.['kubernetes.io/hostname']).toBe(NODE);
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    // The Kubernetes version bootlet implements, bootlet's own as build metadata: kubeadm's skew checks read it.
    expect(node.status?.nodeInfo?.kubeletVersion).toMatch(/^v1\.36\.0\+bootlet\.[0-9A-Za-z.-]+$/);
    const lease = api.object('leases', 'kube-node-lease', NODE) as unknown as Lease;
    expect(lease.spec?.holderIdentity).toBe(NODE);
    const m = mirror('sleeper')!;
    const hash = m.metadata?.annotations?.['kubernetes.io/config.hash'];
    expect(m.metadata?.annotations?.['kubernetes.io/config.mirror']).toBe(hash);
    expect(m.metadata?.ownerReferences?.[0]).toMatchObject({
      apiVersion: 'v1',
      kind: 'Node',
      name: NODE,
      uid: node.metadata?.uid,
      controller: true,
    });
    expect(m.status?.containerStatuses?.[0]?.containerID).toMatch(/^containerd:\/\//);
    const table = await kubectl.ok(['get', 'nodes']);
    expect(table).toMatch(new RegExp(`${NODE}\\s+Ready`));
    const pods = JSON.parse(await kubectl.ok(['get', 'pods', '-A', '-o', 'json'])) as { items: Pod[] };
    expect(pods.items.map((p) => p.metadata?.name).sort()).toEqual([`crasher-${NODE}`, `sleeper-${NODE}`]);
  });

  it('keeps every pod running while the server is away, and reports the crash it missed when it returns', async () => {
    const before = (await h.pods('sleeper'))[0]!.containers.find(
      (c) => c.state === ContainerState.CONTAINER_RUNNING,
    )!.id;
    const restarts = restartsOnServer('crasher') ?? 0;
    await api.stop();
    const crashFile = path.join(h.dir, 'crash-data', 'crash');
    fs.writeFileSync(crashFile, '');
    await waitFor(
      async () =>
        (await h.pods('crasher'))[0]?.containers.some(
          (c) => c.meta.restartCount > restarts && c.state === ContainerState.CONTAINER_RUNNING,
        ),
      {
        timeoutMs: 60_000,
        what: 'crasher restarted while the server is away',
      },
    );
    const sleeperNow = (await h.pods('sleeper'))[0]!.containers.find(
      (c) => c.state === ContainerState.CONTAINER_RUNNING,
    )!.id;
    expect(sleeperNow).toBe(before);
    await api.start();
    await waitFor(() => (restartsOnServer('crasher') ?? 0) > restarts, {
      timeoutMs: 30_000,
      what: 'the crash shown on the server',
    });
    expect(mirror('crasher')?.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode).toBe(7);
  });

  it('recreates a mirror pod deleted through kubectl, without touching the static pod', async () => {
    const uid = mirror('sleeper')!.metadata!.uid;
    const running = (await h.pods('sleeper'))[0]!.containers.find(
      (c) => c.state === ContainerState.CONTAINER_RUNNING,
    )!.id;
    await kubectl.ok(['delete', 'pod', '-n', 'kube-system', `sleeper-${NODE}`], 60_000);
    await waitFor(
      () =>
        mirror('sleeper') &&
        mirror('sleeper')!.metadata!.uid !== uid &&
        !mirror('sleeper')!.metadata!.deletionTimestamp,
      {
        timeoutMs: 30_000,
        what: 'a new mirror pod',
      },
    );
    expect((await h.pods('sleeper'))[0]!.containers.find((c) => c.state === ContainerState.CONTAINER_RUNNING)!.id).toBe(
      running,
    );
  });

  it('replaces the mirror pod when the manifest changes', async () => {
    const oldHash = mirror('sleeper')!.metadata!.annotations!['kubernetes.io/config.mirror'];
    h.write('sleeper.yaml', sleeper('sleeper', '2'));
    await waitFor(
      () => {
        const m = mirror('sleeper');
        const hash = m?.metadata?.annotations?.['kubernetes.io/config.mirror'];
        return hash && hash !== oldHash && m.status?.phase === 'Running' ? m : undefined;
      },
      { timeoutMs: 60_000, what: 'the mirror pod of the new manifest, Running' },
    );
    const events = JSON.parse(await kubectl.ok(['get', 'events', '-n', 'kube-system', '-o', 'json'])) as {
      items: { reason: string; involvedObject: { name: string } }[];
    };
    const reasons = new Set(
      events.items.filter((e) => e.involvedObject.name === `sleeper-${NODE}`).map((e) => e.reason),
    );
    expect(reasons.has('Started')).toBe(true);
    expect(reasons.has('Killing')).toBe(true);
  });
});
