// The API agent against the fake API server, with real kubectl as the operator: a server that is
// absent at start, appears, goes away and comes back; mirror pods kept true; statuses converging.
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiSide, type ApiSide } from '../../../src/apiserver/api-side.js';
import { registerRequestResult } from '../../../src/apiserver/client/request-metrics.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { startFakeApiServer, type FakeApiServer, type KObject } from '../../support/fake-apiserver/index.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { FakeStaticPods, FakeStatuses, fakeNodeInfo, runningStatus, staticPod } from './fakes.js';

const NODE = 'cp-1';
const dir = useTmpDir('apiserver-agent');
let api: FakeApiServer;
let kubectl: Kubectl;
let agent: ApiSide | undefined;
const log = memoryLogger(2);
/** Requests that got no answer (rest_client_requests_total{code="<error>"}): while the server is away, its probes. */
let unanswered = 0;
const pods = new FakeStaticPods(['etcd', 'kube-apiserver', 'kube-scheduler'].map((n) => staticPod(n, NODE)));
const statuses = new FakeStatuses();

function mirrors(): KObject[] {
  return api
    .objects('pods')
    .filter(
      (p) =>
        (p.metadata.annotations as Record<string, string> | undefined)?.['kubernetes.io/config.mirror'] !== undefined,
    );
}
function mirror(key: string): Pod | undefined {
  const [ns, name] = key.split('/');
  return api.pod(ns, name);
}
/** Every static pod has a current mirror whose status shows `restarts` restarts. */
function converged(restarts = 0): boolean {
  return pods.list().every((sp) => {
    const m = mirror(sp.key);
    return (
      m?.metadata?.annotations?.['kubernetes.io/config.mirror'] === sp.uid &&
      !m.metadata.deletionTimestamp &&
      m.status?.phase === 'Running' &&
      m.status.containerStatuses?.[0]?.restartCount === restarts
    );
  });
}
function logged(msg: string): number {
  return log.lines.filter((l) => (JSON.parse(l) as { msg: string }).msg === msg).length;
}

beforeAll(async () => {
  api = await startFakeApiServer();
  api.writeKubeconfig(join(dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  kubectl = new Kubectl(api.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
  await api.stop();
  for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp));
  registerRequestResult((code) => {
    if (code === '<error>') unanswered++;
  });
});

afterAll(async () => {
  const warnings = log.lines.filter((l) => l.includes('"severity":"warning"'));
  if (warnings.length) console.log(`agent warnings:\n${warnings.join('\n')}`);
  await agent?.stop();
  await api?.dispose();
  registerRequestResult(undefined);
});

/** Waits until the agent has sent `n` more requests that found no server (its probes while the server is away). */
async function unansweredRequests(n: number, what: string): Promise<void> {
  const from = unanswered;
  await waitFor(() => unanswered - from >= n, { timeoutMs: 15_000, what: `${n} unanswered requests: ${what}` });
}

describe('a server that is not there yet', () => {
  it('idles quietly, then registers the node, lease, mirror pods and statuses once the server appears', async () => {
    agent = startApiSide({
      kubeconfigPath: join(dir, 'node.kubeconfig'),
      nodeInfo: fakeNodeInfo(NODE),
      staticPods: pods,
      statuses,
      logger: log.logger,
      requestTimeoutMs: 2000,
    });
    await waitFor(() => logged('API server not reachable yet; running on our own and retrying') === 1, {
      timeoutMs: 10_000,
      what: 'the one "not reachable" line',
    });
    await unansweredRequests(5, 'probes after the "not reachable" line, each of which could have logged again');
    expect(logged('API server not reachable yet; running on our own and retrying')).toBe(1);
    expect(agent.state().connected).toBe(false);

    const t0 = Date.now();
    await api.start();
    await waitFor(
      () => api.object('nodes', '', NODE) && api.object('leases', 'kube-node-lease', NODE) && converged(0),
      { timeoutMs: 20_000, what: 'node, lease, mirrors and statuses' },
    );
    console.log(`converged ${Date.now() - t0} ms after the API server started (3 static pods)`);
    expect(logged('API server reachable')).toBe(1);
    expect(agent.state().connected).toBe(true);
  });

  it('shows the node Ready to kubectl, with labels, addresses and a lease owned by it', async () => {
    await waitFor(async () => /\bcp-1\s+Ready\b/.test(await kubectl.ok(['get', 'nodes'])), {
      timeoutMs: 15_000,
      what: 'kubectl get nodes to show cp-1 Ready',
    });
    const node = JSON.parse(await kubectl.ok(['get', 'node', NODE, '-o', 'json'])) as {
      metadata: { uid: string; labels: Record<string, string> };
      status: { addresses: { type: string; address: string }[]; nodeInfo: Record<string, string> };
    };
    expect(node.metadata.labels).toMatchObject({
      'kubernetes.io/hostname': NODE,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'example.com/pool': 'control-plane',
    });
    expect(node.status.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.7' },
      { type: 'Hostname', address: NODE },
    ]);
    expect(node.status.nodeInfo).toMatchObject({
      containerRuntimeVersion: 'containerd://1.6.20',
      kubeletVersion: 'v0.1.0-bootlet',
    });
    const lease = api.object('leases', 'kube-node-lease', NODE) as unknown as {
      spec: Record<string, unknown>;
      metadata: { ownerReferences: unknown[] };
    };
    expect(lease.spec).toMatchObject({ holderIdentity: NODE, leaseDurationSeconds: 40 });
    expect(lease.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: NODE, uid: node.metadata.uid },
    ]);
  });

  it('shows the mirror pods to kubectl with the static annotations and the Node as owner', async () => {
    const list = JSON.parse(await kubectl.ok(['get', 'pods', '-A', '-o', 'json'])) as { items: Pod[] };
    const nodeUid = api.object('nodes', '', NODE)?.metadata.uid;
    expect(list.items).toHaveLength(3);
    for (const sp of pods.list()) {
      const m = list.items.find((p) => p.metadata?.name === sp.pod.metadata.name);
      expect(m?.metadata?.annotations).toMatchObject({
        'kubernetes.io/config.mirror': sp.uid,
        'kubernetes.io/config.hash': sp.uid,
        'kubernetes.io/config.source': 'file',
      });
      expect(m?.metadata?.ownerReferences).toEqual([
        { apiVersion: 'v1', kind: 'Node', name: NODE, uid: nodeUid, controller: true },
      ]);
      expect(m?.spec?.nodeName).toBe(NODE);
      expect(m?.metadata?.labels).toEqual(sp.pod.metadata.labels);
    }
  });
});

describe('keeping mirror pods true', () => {
  it('kubectl delete pod returns (the agent finishes it) and the mirror comes back with a new UID', async () => {
    const key = `kube-system/etcd-${NODE}`;
    const before = mirror(key)?.metadata?.uid;
    await kubectl.ok(['delete', 'pod', '-n', 'kube-system', `etcd-${NODE}`], 30_000);
    await waitFor(() => mirror(key)?.metadata?.uid !== before && converged(0), {
      timeoutMs: 15_000,
      what: 'a new etcd mirror pod with status',
    });
    const del = api.requests.filter(
      (r) => r.method === 'DELETE' && r.user === `system:node:${NODE}` && r.path.endsWith(`/etcd-${NODE}`),
    );
    expect(del.length).toBeGreaterThan(0);
  });

  it('replaces the mirror when the manifest (hash) changes', async () => {
    const next = staticPod('kube-scheduler', NODE, { image: 'registry.k8s.io/kube-scheduler:v1.32.1' });
    const old = pods.get(next.key)!;
    expect(next.uid).not.toBe(old.uid);
    pods.set(next);
    statuses.set(next.uid, runningStatus(next));
    await waitFor(
      () => mirror(next.key)?.metadata?.annotations?.['kubernetes.io/config.mirror'] === next.uid && converged(0),
      { timeoutMs: 15_000, what: 'the scheduler mirror with the new hash' },
    );
    expect(mirror(next.key)?.spec?.containers[0].image).toBe('registry.k8s.io/kube-scheduler:v1.32.1');
  });

  it('deletes the mirror of a removed static pod, and orphan mirror pods bound to this node', async () => {
    const nodeUid = String(api.object('nodes', '', NODE)?.metadata.uid);
    api.seedObject('pods', {
      metadata: {
        name: `stray-${NODE}`,
        namespace: 'default',
        annotations: {
          'kubernetes.io/config.mirror': 'deadbeef',
          'kubernetes.io/config.hash': 'deadbeef',
          'kubernetes.io/config.source': 'file',
        },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: nodeUid, controller: true }],
      },
      spec: { nodeName: NODE, containers: [{ name: 'c', image: 'i' }] },
    });
    const gone = `kube-system/kube-apiserver-${NODE}`;
    const removed = pods.get(gone)!;
    pods.remove(gone);
    // The orphan goes at once; the removed pod's mirror waits for its last, terminal status.
    await waitFor(() => !api.object('pods', 'default', `stray-${NODE}`), {
      timeoutMs: 15_000,
      what: 'the orphan mirror pod gone',
    });
    expect(mirror(gone)).toBeDefined();
    const phases: string[] = [];
    const unsubscribe = api.store.subscribe((ev) => {
      if (ev.object.metadata.name === `kube-apiserver-${NODE}`)
        phases.push(`${ev.type} ${String((ev.object.status as { phase?: string } | undefined)?.phase)}`);
    });
    statuses.set(removed.uid, { ...runningStatus(removed), phase: 'Succeeded' });
    await waitFor(() => !mirror(gone), { timeoutMs: 15_000, what: 'the removed mirror pod gone' });
    unsubscribe();
    expect(phases.slice(-2)).toEqual(['MODIFIED Succeeded', 'DELETED Succeeded']);
    expect(mirrors()).toHaveLength(2);
  });

  it('never changes what runs: editing a mirror is undone only through its hash', async () => {
    const key = `kube-system/etcd-${NODE}`;
    const sp = pods.get(key)!;
    const uid = mirror(key)?.metadata?.uid;
    // A label edit by an admin is left alone (the mirror is a copy, not a source of truth).
    await kubectl.ok(['label', 'pod', '-n', 'kube-system', `etcd-${NODE}`, 'edited=yes']);
    // Two status changes, each written by the agent: the answer to the first carries the edited
    // mirror into its cache, so the pass that writes the second has reconciled the edited mirror.
    for (const ip of ['10.0.0.8', '10.0.0.7']) {
      statuses.set(sp.uid, runningStatus(sp, 0, ip));
      await waitFor(() => mirror(key)?.status?.podIP === ip, {
        timeoutMs: 15_000,
        what: `the agent to write the status with podIP ${ip}`,
      });
    }
    expect(mirror(key)?.metadata?.uid).toBe(uid);
    expect(mirror(key)?.metadata?.labels?.edited).toBe('yes');
    expect(pods.get(key)?.pod.metadata.labels?.edited).toBeUndefined();
  });
});

describe('the server going away and coming back', () => {
  it('keeps only the latest status while the server is stopped, and sends it on start()', async () => {
    await api.stop();
    await waitFor(() => !agent!.state().connected, { timeoutMs: 15_000, what: 'the agent to notice' });
    expect(logged('API server unreachable; running on our own and retrying')).toBe(1);
    for (let restarts = 1; restarts <= 20; restarts++)
      for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp, restarts));
    await unansweredRequests(3, 'probes of the stopped server after the status changes');
    const t0 = Date.now();
    const before = api.requests.length;
    await api.start();
    await waitFor(() => converged(20), { timeoutMs: 20_000, what: 'statuses with 20 restarts' });
    console.log(`statuses converged ${Date.now() - t0} ms after the API server returned`);
    // Coalesced: one status write per pod, not one per change made while away.
    const statusWrites = api.requests
      .slice(before)
      .filter((r) => r.method === 'PATCH' && r.path.endsWith('/status') && r.path.includes('/pods/'));
    expect(statusWrites.length).toBeLessThanOrEqual(pods.list().length * 2);
    expect(logged('API server reachable again')).toBe(1);
  });

  it('429 with Retry-After and a hung server never block the callers', async () => {
    api.failNext(5, 429, 1, (r) => r.user === `system:node:${NODE}`);
    const t0 = performance.now();
    for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp, 21));
    agent!.recorder.event({ kind: 'Node', name: NODE, uid: NODE }, 'Normal', 'Test', 'during 429');
    expect(performance.now() - t0).toBeLessThan(50);
    await waitFor(() => converged(21), { timeoutMs: 30_000, what: 'statuses after the 429s' });
    api.failNext(0, 429);

    api.hang(true);
    const t1 = performance.now();
    for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp, 22));
    expect(performance.now() - t1).toBeLessThan(50);
    await waitFor(() => !agent!.state().connected, {
      timeoutMs: 15_000,
      what: 'the hung server to count as unreachable',
    });
    api.hang(false);
    await waitFor(() => converged(22), { timeoutMs: 20_000, what: 'statuses after the hang' });
  });

  it('records events that kubectl describe shows for the mirror pod and the node', async () => {
    const sp = pods.get(`kube-system/etcd-${NODE}`)!;
    const ref = {
      kind: 'Pod' as const,
      namespace: sp.pod.metadata.namespace,
      name: sp.pod.metadata.name,
      uid: sp.uid,
      fieldPath: 'spec.containers{etcd}',
    };
    for (let i = 0; i < 3; i++)
      agent!.recorder.event(ref, 'Warning', 'BackOff', 'Back-off restarting failed container etcd in pod etcd');
    agent!.recorder.event(
      ref,
      'Normal',
      'Pulled',
      'Container image "registry.k8s.io/etcd:3.5.16-0" already present on machine',
    );
    await waitFor(
      async () => {
        const out = await kubectl.ok(['describe', 'pod', '-n', 'kube-system', `etcd-${NODE}`]);
        return /BackOff/.test(out) && /x3/.test(out) && /Pulled/.test(out) && out;
      },
      { timeoutMs: 20_000, what: 'describe pod to show the events' },
    ).catch(async (e: unknown) => {
      console.log(await kubectl.ok(['get', 'events', '-A', '-o', 'yaml']));
      throw e;
    });
    const nodeOut = await waitFor(
      async () => {
        const out = await kubectl.ok(['describe', 'node', NODE]);
        return /Starting/.test(out) && /NodeReady/.test(out) && out;
      },
      { timeoutMs: 20_000, what: 'describe node to show the Starting event' },
    );
    expect(nodeOut).toMatch(/kubelet/);
  });

  it('logged no warnings, and one line per reachability change; NodeRestriction never said no', () => {
    expect(log.lines.filter((l) => l.includes('"severity":"warning"'))).toEqual([]);
    expect(
      api.requests.filter((r) => r.user === `system:node:${NODE}` && (r.status === 403 || r.status === 422)),
    ).toEqual([]);
    // One line per change of reachability, never one per failed request: the lines alternate, and the
    // three outages (stop, 429s, hang) are each said once (a loaded machine may see a fourth flap).
    const changes = log.lines
      .map((l) => (JSON.parse(l) as { msg: string }).msg)
      .filter(
        (m) => m === 'API server unreachable; running on our own and retrying' || m === 'API server reachable again',
      );
    expect(changes.every((m, i) => i === 0 || m !== changes[i - 1])).toBe(true);
    const down = logged('API server unreachable; running on our own and retrying');
    expect(down).toBeGreaterThanOrEqual(3);
    expect(down).toBeLessThanOrEqual(5);
  });

  it('a restarted agent reconciles mirror pods when the server returns', async () => {
    await agent!.stop();
    agent = undefined;
    await api.stop();
    const next = staticPod('etcd', NODE, { image: 'registry.k8s.io/etcd:3.5.17-0' });
    pods.set(next);
    pods.set(staticPod('kube-controller-manager', NODE));
    for (const sp of pods.list()) statuses.set(sp.uid, runningStatus(sp, 3));
    const notYet = logged('API server not reachable yet; running on our own and retrying');
    agent = startApiSide({
      kubeconfigPath: join(dir, 'node.kubeconfig'),
      nodeInfo: fakeNodeInfo(NODE),
      staticPods: pods,
      statuses,
      logger: log.logger,
      requestTimeoutMs: 2000,
    });
    // The server returns under an agent that has found it away, not under one still starting.
    await waitFor(() => logged('API server not reachable yet; running on our own and retrying') > notYet, {
      timeoutMs: 15_000,
      what: 'the restarted agent to find no server',
    });
    await api.start();
    await waitFor(() => converged(3) && mirrors().length === pods.list().length, {
      timeoutMs: 20_000,
      what: 'mirrors of the restarted agent',
    });
  });
});
