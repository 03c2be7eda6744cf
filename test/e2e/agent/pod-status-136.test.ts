// Pod status items of a 1.36 kubelet, through the fake API server and Debian sid's kubectl 1.36
// (dev/kubectl.ts; the packaged agent, a real containerd): observedGeneration follows a spec update (KEP-5067), a
// readiness gate holds Ready until its condition is set through the API, and an agent restarted
// with Ready pods that have readiness probes never reports them not ready (KEP-4781).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Pod, PodCondition } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';
import { busyboxApiPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import { freePorts } from '../../support/ports.js';
import { readOnlyPods } from '../../support/read-only-pods.js';

const NODE = 'status136-e2e';
const h = useAgentHarness('status136', NODE, { extraArgs: ['--v=2'] });
let api: FakeApiServer;
let kubectl: Kubectl;
let nodeKubeconfig: string;
let probeDir: string;
let readOnlyPort: number;

/** Each readiness probe appends a line here (a hostPath volume): how a test knows a probe ran. */
const probeCount = (name: string): number => {
  const f = path.join(probeDir, name);
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).length : 0;
};

function container(name: string): Record<string, unknown> {
  return {
    name: 'main',
    image: TEST_IMAGES.busybox,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', SLEEP_LOOP],
    volumeMounts: [{ name: 'probes', mountPath: '/probes' }],
    readinessProbe: { exec: { command: ['sh', '-c', `echo x >> /probes/${name}`] }, periodSeconds: 10 },
  };
}

const apiPod = (name: string, extra: Record<string, unknown> = {}): string =>
  busyboxApiPod(name, NODE, {
    spec: {
      containers: [container(name)],
      volumes: [{ name: 'probes', hostPath: { path: probeDir, type: 'Directory' } }],
      ...extra,
    },
  });

const staticProbed = (): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'probed', namespace: 'kube-system' },
    spec: {
      hostNetwork: true,
      terminationGracePeriodSeconds: 1,
      containers: [container('static')],
      volumes: [{ name: 'probes', hostPath: { path: probeDir, type: 'Directory' } }],
    },
  });

async function getPod(name: string): Promise<Pod> {
  return JSON.parse(await kubectl.ok(['get', 'pod', '-n', 'kube-system', name, '-o', 'json'])) as Pod;
}

const condition = (p: Pod | undefined, type: string): PodCondition | undefined =>
  p?.status?.conditions?.find((c) => c.type === type);

beforeAll(async () => {
  probeDir = path.join(h.dir, 'probes');
  fs.mkdirSync(probeDir, { recursive: true });
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  // Debian sid's kubectl 1.36 (dev/kubectl.ts), the Kubectl class's default.
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  h.write('probed.yaml', staticProbed());
  [readOnlyPort] = await freePorts(1);
  h.launch({ readOnlyPort, extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`] });
  await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node registered' });
});

afterAll(async () => {
  if (process.env.SHOW_AGENT_LOG) console.log(h.agent().lines.slice(-80).join('\n'));
  await api?.dispose();
});

describe('pod status of a 1.36 kubelet', () => {
  it('observedGeneration follows a spec update of an API pod, on the status and on each condition', async () => {
    await kubectl.ok(['create', '-f', '-'], 60_000, apiPod('gen'));
    const first = await waitFor(
      async () => {
        const p = await getPod('gen');
        return condition(p, 'Ready')?.status === 'True' ? p : undefined;
      },
      { timeoutMs: 60_000, what: 'the API pod Ready' },
    );
    expect(first.metadata?.generation).toBe(1);
    expect(first.status?.observedGeneration).toBe(1);
    const kubeletConditions = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];
    const generations = (p: Pod) =>
      Object.fromEntries((p.status?.conditions ?? []).map((c) => [c.type, c.observedGeneration]));
    expect(generations(first)).toEqual(Object.fromEntries(kubeletConditions.map((t) => [t, 1])));

    await kubectl.ok([
      'patch',
      'pod',
      '-n',
      'kube-system',
      'gen',
      '--type=merge',
      '-p',
      '{"spec":{"activeDeadlineSeconds":3600}}',
    ]);
    const second = await waitFor(
      async () => {
        const p = await getPod('gen');
        return p.status?.observedGeneration === 2 ? p : undefined;
      },
      { timeoutMs: 30_000, what: 'observedGeneration 2 after the spec update' },
    );
    expect(second.metadata?.generation).toBe(2);
    expect(generations(second)).toEqual(Object.fromEntries(kubeletConditions.map((t) => [t, 2])));
    // Nothing else changed: the container kept running, Ready kept its transition time.
    expect(second.status?.containerStatuses?.[0]?.containerID).toBe(first.status?.containerStatuses?.[0]?.containerID);
    expect(condition(second, 'Ready')?.lastTransitionTime).toBe(condition(first, 'Ready')?.lastTransitionTime);
    const shown = await kubectl.ok([
      'get',
      'pod',
      '-n',
      'kube-system',
      'gen',
      '-o',
      'jsonpath={.metadata.generation} {.status.observedGeneration}',
    ]);
    expect(shown).toBe('2 2');

    // A static pod has no generation of its own: its mirror has the server's 1, and none is observed.
    const mirror = await waitFor(
      async () => {
        const p = await getPod(`probed-${NODE}`);
        return condition(p, 'Ready')?.status === 'True' ? p : undefined;
      },
      { timeoutMs: 60_000, what: 'the mirror pod Ready' },
    );
    expect(mirror.metadata?.generation).toBe(1);
    expect(mirror.status?.observedGeneration).toBeUndefined();
    expect((mirror.status?.conditions ?? []).every((c) => c.observedGeneration === undefined)).toBe(true);
  });

  it('a readiness gate keeps the pod not Ready until its condition is set True through the API, which the node keeps', async () => {
    await kubectl.ok(
      ['create', '-f', '-'],
      60_000,
      apiPod('gated', { readinessGates: [{ conditionType: 'example.com/lb-ready' }] }),
    );
    const waiting = await waitFor(
      async () => {
        const p = await getPod('gated');
        return condition(p, 'ContainersReady')?.status === 'True' ? p : undefined;
      },
      { timeoutMs: 60_000, what: 'the gated pod’s containers ready' },
    );
    expect(condition(waiting, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ReadinessGatesNotReady',
      message: 'corresponding condition of pod readiness gate "example.com/lb-ready" does not exist.',
    });
    await kubectl.ok([
      'patch',
      'pod',
      '-n',
      'kube-system',
      'gated',
      '--subresource=status',
      '-p',
      '{"status":{"conditions":[{"type":"example.com/lb-ready","status":"True"}]}}',
    ]);
    const ready = await waitFor(
      async () => {
        const p = await getPod('gated');
        return condition(p, 'Ready')?.status === 'True' ? p : undefined;
      },
      { timeoutMs: 30_000, what: 'the gated pod Ready once its gate is True' },
    );
    expect(condition(ready, 'example.com/lb-ready')?.status).toBe('True');
    expect(condition(ready, 'Ready')?.reason).toBeUndefined();
  });

  it('an agent restarted with Ready pods that have readiness probes never reports them not ready', async () => {
    const watched = new Set(['gen', `probed-${NODE}`]);
    const before = await Promise.all([...watched].map(getPod));
    for (const p of before) expect(condition(p, 'Ready')?.status).toBe('True');
    const seen: { name: string; ready?: string; containerReady?: boolean }[] = [];
    const unsubscribe = api.store.subscribe((ev) => {
      const p = ev.object as unknown as Pod;
      const name = p.metadata?.name ?? '';
      if (p.metadata?.namespace !== 'kube-system' || !watched.has(name)) return;
      seen.push({
        name,
        ready: condition(p, 'Ready')?.status,
        containerReady: p.status?.containerStatuses?.[0]?.ready,
      });
    });
    const patchesBefore = api.requests.length;
    try {
      await h.agent().kill('SIGKILL');
      const probedBefore = { gen: probeCount('gen'), static: probeCount('static') };
      const agent = h.launch({ readOnlyPort, extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`] });
      await agent.waitForLog((r) => r.msg === 'API pods listed', 'the API pods listed', 60_000);
      // Each pod's readiness probe has run in the new agent: the window in which a restarted kubelet
      // used to report them not ready is over, and each has been synced with its mirror or its object.
      await waitFor(() => probeCount('gen') > probedBefore.gen && probeCount('static') > probedBefore.static, {
        timeoutMs: 60_000,
        what: 'a readiness probe of each pod in the restarted agent',
      });
      const after = await waitFor(
        async () => {
          const ps = await Promise.all([...watched].map(getPod));
          return ps.every((p) => condition(p, 'Ready')?.status === 'True') ? ps : undefined;
        },
        { timeoutMs: 30_000, what: 'both pods Ready after the restart' },
      );
      for (const [i, p] of after.entries())
        expect(p.status?.containerStatuses?.[0]?.containerID).toBe(
          before[i]!.status?.containerStatuses?.[0]?.containerID,
        );
      // The new agent's own status of the static pod takes the transition times the mirror showed
      // (the kubelet's status manager falls back to the API's copy), so nothing is restamped.
      const staticBefore = before.find((p) => p.metadata?.name === `probed-${NODE}`)!;
      const timesOf = (p: Pod | undefined) =>
        Object.fromEntries((p?.status?.conditions ?? []).map((c) => [c.type, c.lastTransitionTime]));
      await waitFor(
        async () => {
          const own = (await readOnlyPods(readOnlyPort)).items.find((p) => p.metadata?.name === `probed-${NODE}`);
          return JSON.stringify(timesOf(own)) === JSON.stringify(timesOf(staticBefore));
        },
        { timeoutMs: 30_000, what: "the restarted agent's conditions with the mirror's transition times" },
      );
      for (const [i, p] of after.entries()) expect(timesOf(p)).toEqual(timesOf(before[i]));
    } finally {
      unsubscribe();
    }
    const statusPatches = api.requests
      .slice(patchesBefore)
      .filter(
        (r) =>
          r.method === 'PATCH' &&
          r.path.includes('/pods/') &&
          r.path.endsWith('/status') &&
          r.user === `system:node:${NODE}`,
      );
    console.log(`status patches after the restart: ${statusPatches.length}; pod events: ${JSON.stringify(seen)}`);
    expect(seen.filter((s) => s.ready !== 'True' || s.containerReady !== true)).toEqual([]);
  });
});
