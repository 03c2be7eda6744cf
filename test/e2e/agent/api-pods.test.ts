// Pods bound to the node through the API server (the packaged agent, a real containerd, the fake
// API server, real kubectl creating the pod as a DaemonSet controller would): the pod runs beside a
// static pod of the same written name; an agent restarted while the server is away keeps it
// running, and neither restarts nor duplicates it once the server answers again.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Node, Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';
import { busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import { declaredFeatures, missingFeatures, NODE_FEATURES } from '../../../src/config/node-features.js';

const NODE = 'api-pods-e2e';
const h = useAgentHarness('api-pods', NODE, { extraArgs: ['--v=2'] });
let api: FakeApiServer;
let kubectl: Kubectl;
let nodeKubeconfig: string;

const command = ['sh', '-c', SLEEP_LOOP];

const staticWeb = busyboxPod('web', SLEEP_LOOP);

/** As the DaemonSet controller writes it (the fake has no DaemonSets: the owner is a live object, so its GC leaves the pod be). */
function daemonPod(name: string, ownerUid: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'kube-system',
      labels: { 'k8s-app': name },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'DaemonSet', name, uid: ownerUid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      terminationGracePeriodSeconds: 2,
      restartPolicy: 'Always',
      containers: [{ name: 'main', image: TEST_IMAGES.busybox, command, imagePullPolicy: 'IfNotPresent' }],
      volumes: [{ name: 'scratch', emptyDir: {} }],
    },
  });
}

async function runtimePods(name: string): Promise<RuntimePod[]> {
  const runtime = h.cri().runtime;
  const listed = [...(await listRuntimePods(runtime)).values()].filter(
    (p) => p.name === name && p.namespace === 'kube-system',
  );
  const full = await Promise.all(listed.map((p) => readRuntimePod(runtime, p.uid)));
  return full.filter((p): p is RuntimePod => p !== undefined);
}

const running = (p: RuntimePod | undefined) => p?.containers.find((c) => c.state === ContainerState.CONTAINER_RUNNING);

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  h.write('web.yaml', staticWeb);
  h.launch({ extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`] });
});

afterAll(async () => {
  if (process.env.SHOW_AGENT_LOG) console.log(h.agent().lines.slice(-80).join('\n'));
  await api?.dispose();
});

describe('API pods', () => {
  it('runs a pod bound to the node, beside a static pod of the same written name', async () => {
    await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node registered' });
    const owner = api.object('nodes', '', NODE)!.metadata.uid as string;
    const t0 = Date.now();
    await kubectl.ok(['create', '-f', '-'], 60_000, daemonPod('web', owner));
    const created = Date.now();
    const uid = api.object('pods', 'kube-system', 'web')!.metadata.uid as string;
    const apiPod = await waitFor(
      async () => {
        const p = (await runtimePods('web'))[0];
        return running(p) ? p : undefined;
      },
      { timeoutMs: 60_000, what: 'the API pod running' },
    );
    const runningAt = Date.now();
    expect(apiPod.uid).toBe(uid);
    expect(apiPod.sandboxes[0]?.annotations?.['kubernetes.io/config.source']).toBe('api');
    await waitFor(async () => running((await runtimePods(`web-${NODE}`))[0]), {
      timeoutMs: 60_000,
      what: 'the static pod running',
    });
    // The static pod's mirror is listed to the source too, and is not run as an API pod.
    await waitFor(() => api.object('pods', 'kube-system', `web-${NODE}`), {
      timeoutMs: 30_000,
      what: 'the mirror pod',
    });
    expect((await runtimePods(`web-${NODE}`)).length).toBe(1);
    expect((await runtimePods('web')).length).toBe(1);
    // Its status is the pod's own (no mirror of it), patched with the UID precondition.
    const reported = await waitFor(
      () => {
        const o = api.object('pods', 'kube-system', 'web') as unknown as
          | {
              metadata: { uid: string };
              status?: { phase?: string; containerStatuses?: { containerID?: string; ready?: boolean }[] };
            }
          | undefined;
        return o?.status?.phase === 'Running' && o.status.containerStatuses?.[0]?.ready ? o : undefined;
      },
      { timeoutMs: 30_000, what: 'the API pod Running in the API' },
    );
    console.log(
      `API pod: kubectl create ${created - t0} ms, created → container running ${runningAt - created} ms, → Running and ready in the API ${Date.now() - created} ms`,
    );
    expect(reported.metadata.uid).toBe(uid);
    expect(reported.status!.containerStatuses![0]!.containerID).toBe(`containerd://${running(apiPod)!.id}`);
    const patches = api.requests.filter(
      (r) => r.method === 'PATCH' && r.path === '/api/v1/namespaces/kube-system/pods/web/status',
    );
    expect(patches.length).toBeGreaterThan(0);
    expect(patches.every((r) => r.user === `system:node:${NODE}` && r.status === 200)).toBe(true);
  });

  it('an agent restarted while the server is away keeps the API pod running, and restarts or duplicates nothing when it is back', async () => {
    const before = running((await runtimePods('web'))[0])!;
    const staticBefore = running((await runtimePods(`web-${NODE}`))[0])!;
    await api.stop();
    await h.agent().kill('SIGKILL');
    const agent = h.launch({ extraArgs: ['--v=3', `--kubeconfig=${nodeKubeconfig}`] });
    await agent.waitForLog(
      (r) => String(r.msg).includes('Pods from the API server keep running until it answers'),
      'the API pod held while the server is away',
      60_000,
    );
    expect(running((await runtimePods('web'))[0])?.id).toBe(before.id);
    await api.start();
    await agent.waitForLog(
      (r) => r.msg === 'API pods listed',
      'the API pods listed after the server came back',
      60_000,
    );
    // Its worker has synced the listed pod, and found nothing to do: adopted, not restarted.
    const uid = api.object('pods', 'kube-system', 'web')!.metadata.uid as string;
    const synced = await agent.waitForLog(
      (r) => r.msg === 'Pod synced' && r.podUID === uid,
      'the API pod synced by its worker',
      30_000,
    );
    expect(synced).toMatchObject({ started: 0, killed: 0, sandboxCreated: false });
    const after = await runtimePods('web');
    expect(after).toHaveLength(1);
    expect(after[0]!.containers).toHaveLength(1);
    expect(running(after[0])?.id).toBe(before.id);
    expect(after[0]!.sandboxes).toHaveLength(1);
    const staticAfter = await runtimePods(`web-${NODE}`);
    expect(staticAfter).toHaveLength(1);
    expect(running(staticAfter[0])?.id).toBe(staticBefore.id);
    expect(agent.lines.filter((l) => l.includes('"severity":"error"'))).toEqual([]);
  });

  it('kubectl delete pod: stopped within the shorter grace period, then the object is gone (grace-0 DELETE with the UID)', async () => {
    // A container that ignores TERM: only the grace period ends it.
    const stubborn = JSON.parse(daemonPod('stubborn', api.object('nodes', '', NODE)!.metadata.uid as string)) as {
      spec: { terminationGracePeriodSeconds: number; containers: { command: string[] }[] };
    };
    stubborn.spec.terminationGracePeriodSeconds = 30;
    stubborn.spec.containers[0]!.command = ['sh', '-c', "trap '' TERM; while true; do sleep 1; done"];
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(stubborn));
    const uid = api.object('pods', 'kube-system', 'stubborn')!.metadata.uid as string;
    await waitFor(async () => running((await runtimePods('stubborn'))[0]), {
      timeoutMs: 60_000,
      what: 'stubborn running',
    });
    const seen: Array<{ type: string; phase?: string }> = [];
    const unsubscribe = api.store.subscribe((ev) => {
      const p = ev.object as unknown as Pod;
      if (p.metadata?.uid === uid) seen.push({ type: ev.type, phase: p.status?.phase });
    });
    const t0 = Date.now();
    try {
      await kubectl.ok(['delete', 'pod', '-n', 'kube-system', 'stubborn', '--grace-period=3'], 60_000);
    } finally {
      unsubscribe();
    }
    const took = Date.now() - t0;
    // The last status before the object went is the terminal one (killed at the grace's end: Failed).
    const beforeDelete = seen.slice(
      0,
      seen.findIndex((e) => e.type === 'DELETED'),
    );
    expect(beforeDelete.at(-1)?.phase).toBe('Failed');
    console.log(`kubectl delete pod (grace 3 s of 30 s) returned after ${took} ms`);
    expect(api.object('pods', 'kube-system', 'stubborn')).toBeUndefined();
    expect(took).toBeLessThan(15_000);
    expect(took).toBeGreaterThanOrEqual(2_500);
    expect((await runtimePods('stubborn')).every((p) => !running(p))).toBe(true);
    const deletes = api.requests.filter(
      (r) =>
        r.method === 'DELETE' &&
        r.path === '/api/v1/namespaces/kube-system/pods/stubborn' &&
        r.user === `system:node:${NODE}`,
    );
    expect(deletes.map((r) => r.status)).toEqual([200]);
    expect(uid).toBeTruthy();
  });

  it('a pod with a volume kind bootlet does not mount is never started: a Warning event names the volume', async () => {
    const pod = JSON.parse(daemonPod('needs-cm', api.object('nodes', '', NODE)!.metadata.uid as string)) as {
      spec: { volumes: unknown[] };
    };
    pod.spec.volumes = [{ name: 'cfg', persistentVolumeClaim: { claimName: 'kube-proxy' } }];
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(pod));
    const event = await waitFor(
      async () => {
        const events = JSON.parse(await kubectl.ok(['get', 'events', '-n', 'kube-system', '-o', 'json'])) as {
          items: { reason: string; type: string; message: string; involvedObject: { name: string } }[];
        };
        return events.items.find((e) => e.involvedObject.name === 'needs-cm' && e.reason === 'FailedMount');
      },
      { timeoutMs: 30_000, what: 'the FailedMount event of needs-cm' },
    );
    expect(event.type).toBe('Warning');
    expect(event.message).toContain('spec.volumes[0].persistentVolumeClaim: Unsupported value: volume "cfg"');
    expect(await runtimePods('needs-cm')).toEqual([]);
    expect(h.agent().proc.exitCode).toBeNull();
  });

  it("a pod whose spec fails validation (a subPath out of its volume, which this fake lets in) is Failed with the API server's words and a Warning event, and never started", async () => {
    const pod = JSON.parse(daemonPod('escapes', api.object('nodes', '', NODE)!.metadata.uid as string)) as {
      spec: { containers: { volumeMounts?: unknown[] }[] };
    };
    pod.spec.containers[0]!.volumeMounts = [{ name: 'scratch', mountPath: '/x', subPath: '../../../../etc' }];
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(pod));
    const failed = await waitFor(
      () => {
        const o = api.pod('kube-system', 'escapes');
        return o?.status?.phase === 'Failed' ? o : undefined;
      },
      { timeoutMs: 30_000, what: 'escapes Failed in the API' },
    );
    expect(failed.status?.reason).toBe('FailedValidation');
    // The API server names a mount's subPath without the mount's index (ValidateVolumeMounts uses the list's path).
    expect(failed.status?.message).toContain(
      'spec.containers[0].volumeMounts.subPath: Invalid value: "../../../../etc": must not contain \'..\'',
    );
    const event = await waitFor(
      async () => {
        const events = JSON.parse(await kubectl.ok(['get', 'events', '-n', 'kube-system', '-o', 'json'])) as {
          items: { reason: string; type: string; message: string; involvedObject: { name: string } }[];
        };
        return events.items.find((e) => e.involvedObject.name === 'escapes' && e.reason === 'FailedValidation');
      },
      { timeoutMs: 30_000, what: 'the FailedValidation event of escapes' },
    );
    expect(event.type).toBe('Warning');
    expect(await runtimePods('escapes')).toEqual([]);
    expect(h.agent().proc.exitCode).toBeNull();
  });

  it("a pod with pod-level resources (1.32, KEP-2837), which bootlet does not size a cgroup from, is Failed in the kubelet's words with a Warning event, and never started", async () => {
    const pod = JSON.parse(daemonPod('pod-sized', api.object('nodes', '', NODE)!.metadata.uid as string)) as {
      spec: { resources?: unknown };
    };
    pod.spec.resources = { limits: { cpu: '500m', memory: '64Mi' } };
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(pod));
    const failed = await waitFor(
      () => {
        const o = api.pod('kube-system', 'pod-sized');
        return o?.status?.phase === 'Failed' ? o : undefined;
      },
      { timeoutMs: 30_000, what: 'pod-sized Failed in the API' },
    );
    expect(failed.spec?.resources).toEqual({ limits: { cpu: '500m', memory: '64Mi' } });
    expect(failed.status?.reason).toBe('PodLevelResourcesNotSupported');
    expect(failed.status?.message).toContain('spec.resources: PodLevelResources feature gate is disabled');
    const event = await waitFor(
      async () => {
        const events = JSON.parse(await kubectl.ok(['get', 'events', '-n', 'kube-system', '-o', 'json'])) as {
          items: { reason: string; type: string; involvedObject: { name: string } }[];
        };
        return events.items.find(
          (e) => e.involvedObject.name === 'pod-sized' && e.reason === 'PodLevelResourcesNotSupported',
        );
      },
      { timeoutMs: 30_000, what: 'the PodLevelResourcesNotSupported event of pod-sized' },
    );
    expect(event.type).toBe('Warning');
    expect(await runtimePods('pod-sized')).toEqual([]);
    expect(h.agent().proc.exitCode).toBeNull();
  });

  it('declares its node features (KEP-5328) on the Node as kubectl 1.36 reads them, and fails a pod that needs one it lacks with PodFeatureUnsupported', async () => {
    const node = await waitFor(
      () => {
        const n = api.object('nodes', '', NODE) as unknown as Node | undefined;
        return n?.status?.nodeInfo?.containerRuntimeVersion ? n : undefined;
      },
      { timeoutMs: 30_000, what: 'the Node with its status' },
    );
    const facts = {
      runtimeVersion: node.status!.nodeInfo!.containerRuntimeVersion,
      runtimeHandlers: node.status!.runtimeHandlers ?? [],
    };
    // What this node implements of the kubelet's 1.36 registry, sorted; none is omitted, as the kubelet's omitempty.
    const expected = declaredFeatures(facts);
    const registry = NODE_FEATURES.filter((f) => f.declared).map((f) => f.name);
    expect(expected.every((f) => registry.includes(f))).toBe(true);
    const shown = await kubectl.ok(['get', 'node', NODE, '-o', 'jsonpath={.status.declaredFeatures}']);
    expect(shown).toBe(expected.length > 0 ? JSON.stringify(expected) : '');
    const asJson = JSON.parse(await kubectl.ok(['get', 'node', NODE, '-o', 'json'])) as { status: object };
    if (expected.length === 0) expect(asJson.status).not.toHaveProperty('declaredFeatures');
    else expect(asJson.status).toHaveProperty('declaredFeatures', expected);

    // A restart rule whose action restarts every container (KEP-5532, declared in 1.36); rules need the container's own restartPolicy.
    const pod = JSON.parse(daemonPod('restart-all', api.object('nodes', '', NODE)!.metadata.uid as string)) as Pod;
    pod.spec!.containers[0]!.restartPolicy = 'Never';
    pod.spec!.containers[0]!.restartPolicyRules = [
      { action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } },
    ];
    const lacking = missingFeatures(pod, facts).map((m) => m.feature.name);
    expect(lacking).toContain('RestartAllContainersOnContainerExits');
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(pod));
    const failed = await waitFor(
      () => {
        const o = api.pod('kube-system', 'restart-all');
        return o?.status?.phase === 'Failed' ? o : undefined;
      },
      { timeoutMs: 30_000, what: 'restart-all Failed in the API' },
    );
    expect(failed.status?.reason).toBe('PodFeatureUnsupported');
    expect(failed.status?.message).toMatch(/^Pod was rejected: .*Pod requires node features that are not available: /);
    // The first missing feature is named (the source names those no kubelet declares, admission the declared ones).
    expect(failed.status?.message).toContain(lacking[0]);
    expect(await runtimePods('restart-all')).toEqual([]);
    expect(h.agent().proc.exitCode).toBeNull();
  });

  it("a label or annotation change reaches the pod's downwardAPI files within 2 s, through the atomic writer", async () => {
    const pod = JSON.parse(daemonPod('labelled', api.object('nodes', '', NODE)!.metadata.uid as string)) as {
      metadata: { annotations?: Record<string, string> };
      spec: { volumes: unknown[]; containers: { volumeMounts?: unknown[] }[] };
    };
    pod.metadata.annotations = { note: 'one' };
    pod.spec.volumes = [
      {
        name: 'info',
        downwardAPI: {
          items: [
            { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
            { path: 'note', fieldRef: { fieldPath: "metadata.annotations['note']" } },
          ],
        },
      },
    ];
    pod.spec.containers[0]!.volumeMounts = [{ name: 'info', mountPath: '/etc/podinfo' }];
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(pod));
    const uid = api.object('pods', 'kube-system', 'labelled')!.metadata.uid as string;
    await waitFor(async () => running((await runtimePods('labelled'))[0]), {
      timeoutMs: 60_000,
      what: 'labelled running',
    });
    const dir = path.join(h.rootDir, 'pods', uid, 'volumes', 'kubernetes.io~downward-api', 'info');
    const read = (f: string): string | undefined =>
      fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f), 'utf8') : undefined;
    expect(read('labels')).toBe('k8s-app="labelled"');
    const before = fs.readlinkSync(path.join(dir, '..data'));
    const t0 = Date.now();
    await kubectl.ok(['label', 'pod', '-n', 'kube-system', 'labelled', 'tier=web']);
    await waitFor(() => read('labels') === 'k8s-app="labelled"\ntier="web"', {
      timeoutMs: 10_000,
      what: 'the new label in the file',
    });
    const labelMs = Date.now() - t0;
    const t1 = Date.now();
    await kubectl.ok(['annotate', 'pod', '-n', 'kube-system', 'labelled', '--overwrite', 'note=two']);
    await waitFor(() => read('note') === 'two', { timeoutMs: 10_000, what: 'the new annotation in the file' });
    const annotateMs = Date.now() - t1;
    console.log(
      `downwardAPI: kubectl label → file ${labelMs} ms, kubectl annotate → file ${annotateMs} ms (kubectl's own time included)`,
    );
    expect(labelMs).toBeLessThan(2000 + 3000);
    expect(fs.readlinkSync(path.join(dir, '..data'))).not.toBe(before);
    // The same pod: nothing restarted for it.
    expect((await runtimePods('labelled'))[0]!.containers).toHaveLength(1);
  });

  it('an API pod and a static pod of the same namespace/name both run (as with the kubelet); the static pod gets no mirror, and a Warning on the API pod says why', async () => {
    const name = `clash-${NODE}`;
    await kubectl.ok(
      ['create', '-f', '-'],
      60_000,
      daemonPod(name, api.object('nodes', '', NODE)!.metadata.uid as string),
    );
    const apiUid = api.object('pods', 'kube-system', name)!.metadata.uid as string;
    await waitFor(async () => running((await runtimePods(name)).find((p) => p.uid === apiUid)), {
      timeoutMs: 60_000,
      what: 'the API pod running',
    });
    h.write('clash.yaml', busyboxPod('clash', SLEEP_LOOP));
    const both = await waitFor(
      async () => {
        const pods = (await runtimePods(name)).filter((p) => running(p));
        return pods.length === 2 ? pods : undefined;
      },
      { timeoutMs: 60_000, what: 'the static pod running beside the API pod' },
    );
    expect(both.map((p) => p.sandboxes[0]?.annotations?.['kubernetes.io/config.source']).sort()).toEqual([
      'api',
      'file',
    ]);
    const event = await waitFor(
      async () => {
        const events = JSON.parse(await kubectl.ok(['get', 'events', '-n', 'kube-system', '-o', 'json'])) as {
          items: { reason: string; type: string; message: string; involvedObject: { name: string; uid?: string } }[];
        };
        return events.items.find((e) => e.involvedObject.name === name && e.reason === 'FailedCreate');
      },
      { timeoutMs: 30_000, what: 'the FailedCreate event on the API pod' },
    );
    expect(event.type).toBe('Warning');
    expect(event.involvedObject.uid).toBe(apiUid);
    expect(event.message).toContain('clash.yaml');
    // The name in the API is still the API pod's, never replaced by a mirror.
    expect(api.object('pods', 'kube-system', name)!.metadata.uid).toBe(apiUid);
    expect(h.agent().lines.some((l) => l.includes('A static pod and an API pod have the same name'))).toBe(true);
    h.remove('clash.yaml');
    await waitFor(async () => ((await runtimePods(name)).filter((p) => running(p)).length === 1 ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the static pod stopped',
    });
    expect(running((await runtimePods(name)).find((p) => p.uid === apiUid))).toBeDefined();
  });
});
