// The isolation fields of API pods, through the packaged agent, the fake API server and real
// kubectl, on containerd 2.1 running bookworm's runc 1.1.5, a runtime that says what it cannot do:
// its handlers list recursive read-only mounts but no user namespaces.
// - A RuntimeClass's handler reaches RunPodSandbox (the sandbox runs on it) and its overhead the
//   pod cgroup; a static pod naming one is looked up the same way once the API server answers.
// - A handler the runtime has not configured fails the sandbox in the runtime's words.
// - `hostUsers: false` is refused with the kubelet's message (no sandbox ever made), on the
//   default handler and on a RuntimeClass's.
// - An AppArmor profile on this host without AppArmor: Failed, reason AppArmor, at admission.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { busyboxApiPod } from '../../support/busybox-pod.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'isolation-api-e2e';
const h = useAgentHarness('isolation-api', NODE, { extraArgs: ['--v=2'] }, () => ({ version: '2.1' }));
let api: FakeApiServer;
let kubectl: Kubectl;
const MiB = 2 ** 20;

interface ApiEvent {
  reason?: string;
  message?: string;
  type?: string;
  involvedObject?: { name?: string };
}

const apiPod = (name: string, spec: Partial<NonNullable<Pod['spec']>> = {}, container: object = {}): string =>
  busyboxApiPod(name, NODE, { spec, container: { ...container } });

async function runtimePods(name: string): Promise<RuntimePod[]> {
  const runtime = h.cri().runtime;
  const listed = [...(await listRuntimePods(runtime)).values()].filter(
    (p) => p.name === name && p.namespace === 'kube-system',
  );
  const full = await Promise.all(listed.map((p) => readRuntimePod(runtime, p.uid)));
  return full.filter((p): p is RuntimePod => p !== undefined);
}

async function runningPod(name: string): Promise<RuntimePod | undefined> {
  const p = (await runtimePods(name))[0];
  return p?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING) ? p : undefined;
}

const eventsOf = (name: string): ApiEvent[] =>
  (api.objects('events', 'kube-system') as unknown as ApiEvent[]).filter((e) => e.involvedObject?.name === name);

const event = (name: string, reason: string): Promise<ApiEvent> =>
  waitFor(() => eventsOf(name).find((e) => e.reason === reason), { timeoutMs: 60_000, what: `${reason} on ${name}` });

/** The handler RunPodSandbox was given, as the runtime lists the sandbox. */
async function handlerOf(sandboxId: string): Promise<string> {
  const sb = (await h.cri().runtime.listPodSandbox({ id: sandboxId }))[0];
  if (!sb) throw new Error(`no sandbox ${sandboxId}`);
  return sb.runtimeHandler;
}

function podMemoryLimit(uid: string): number {
  const v1 = `/sys/fs/cgroup/memory/kubepods/burstable/pod${uid}/memory.limit_in_bytes`;
  const v2 = `/sys/fs/cgroup/kubepods/burstable/pod${uid}/memory.max`;
  return Number(fs.readFileSync(fs.existsSync(v1) ? v1 : v2, 'utf8').trim());
}

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  const nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, [
    'system:nodes',
  ]);
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  const rcFile = path.join(h.dir, 'runtimeclasses.yaml');
  fs.writeFileSync(
    rcFile,
    `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: plain-runc}
handler: runc
overhead:
  podFixed: {memory: 32Mi}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
`,
  );
  await kubectl.ok(['create', '-f', rcFile]);
  // A static pod naming a RuntimeClass: run on its handler once the API server answers.
  h.write(
    'static-rc.yaml',
    `apiVersion: v1
kind: Pod
metadata: {name: static-rc, namespace: kube-system}
spec:
  hostNetwork: true
  runtimeClassName: plain-runc
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`,
  );
  h.launch({ extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`] });
  await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 60_000, what: 'the Node registered' });
});

afterAll(async () => {
  await api?.dispose();
});

describe('isolation of API pods on a runtime without user namespaces', () => {
  it('the runtime says so: handlers with recursive read-only mounts, none with user namespaces', async () => {
    const { runtimeHandlers } = await h.cri().runtime.statusWithHandlers();
    expect(runtimeHandlers.map((x) => x.name).sort()).toEqual(['', 'runc']);
    for (const x of runtimeHandlers)
      expect(x.features).toEqual({ recursiveReadOnlyMounts: true, userNamespaces: false });
    // And the Node says so, as the kubelet's status.runtimeHandlers.
    const reported = await waitFor(
      () => {
        const st = api.object('nodes', '', NODE)?.status as { runtimeHandlers?: unknown[] } | undefined;
        return st?.runtimeHandlers;
      },
      { timeoutMs: 60_000, what: 'the Node reporting its runtime handlers' },
    );
    expect(reported).toEqual(
      runtimeHandlers.map((x) => ({
        name: x.name,
        features: { recursiveReadOnlyMounts: true, userNamespaces: false },
      })),
    );
  });

  it("a RuntimeClass's handler runs the sandbox, and its overhead is in the pod cgroup", async () => {
    await kubectl.ok(
      ['create', '-f', '-'],
      60_000,
      apiPod(
        'rc',
        { runtimeClassName: 'plain-runc' },
        {
          resources: { limits: { memory: '64Mi' }, requests: { memory: '32Mi' } },
        },
      ),
    );
    expect(api.object('pods', 'kube-system', 'rc')?.spec).toMatchObject({ overhead: { memory: '32Mi' } });
    const p = await waitFor(() => runningPod('rc'), { timeoutMs: 90_000, what: 'rc running' });
    expect(await handlerOf(p.sandboxes[0]!.id)).toBe('runc');
    expect(podMemoryLimit(p.uid)).toBe(96 * MiB);
    // Without a RuntimeClass: the default handler.
    await kubectl.ok(['create', '-f', '-'], 60_000, apiPod('plain'));
    const plain = await waitFor(() => runningPod('plain'), { timeoutMs: 90_000, what: 'plain running' });
    expect(await handlerOf(plain.sandboxes[0]!.id)).toBe('');
  });

  it("a static pod's RuntimeClass is read from the API server as the kubelet reads it", async () => {
    const p = await waitFor(() => runningPod(`static-rc-${NODE}`), { timeoutMs: 90_000, what: 'static-rc running' });
    expect(await handlerOf(p.sandboxes[0]!.id)).toBe('runc');
  });

  it("a handler the runtime has not configured fails the sandbox in the runtime's words", async () => {
    await kubectl.ok(['create', '-f', '-'], 60_000, apiPod('gvisor', { runtimeClassName: 'gvisor' }));
    const e = await event('gvisor', 'FailedCreatePodSandBox');
    expect(e.type).toBe('Warning');
    expect(e.message).toMatch(/^Failed to create pod sandbox: .*no runtime for "runsc" is configured/);
    expect(await runtimePods('gvisor')).toEqual([]);
    const status = api.object('pods', 'kube-system', 'gvisor')?.status as { phase?: string } | undefined;
    expect(status?.phase).toBe('Pending');
  });

  it("hostUsers: false is refused on a handler without user namespaces, never run in the node's", async () => {
    await kubectl.ok(['create', '-f', '-'], 60_000, apiPod('userns', { hostUsers: false, hostNetwork: false }));
    const e = await event('userns', 'FailedCreatePodSandBox');
    expect(e.message).toBe(
      "Failed to create pod sandbox: can't set `spec.hostUsers: false`, runtime does not support user namespaces",
    );
    await kubectl.ok(
      ['create', '-f', '-'],
      60_000,
      apiPod('userns-rc', { hostUsers: false, hostNetwork: false, runtimeClassName: 'plain-runc' }),
    );
    const rc = await event('userns-rc', 'FailedCreatePodSandBox');
    expect(rc.message).toBe(
      'Failed to create pod sandbox: can\'t set `spec.hostUsers: false`, RuntimeClass handler "runc" does not support user namespaces',
    );
    // The agent logged it naming the pod and the field; nothing of either pod reached the runtime.
    expect(
      h
        .agent()
        .records()
        .some((r) => r.pod === 'kube-system/userns' && String(r.err).includes('spec.hostUsers: false')),
    ).toBe(true);
    expect(await runtimePods('userns')).toEqual([]);
    expect(await runtimePods('userns-rc')).toEqual([]);
  });

  it("an AppArmor profile on a host without AppArmor: Failed, reason AppArmor, in the kubelet's words", async () => {
    await kubectl.ok(
      ['create', '-f', '-'],
      60_000,
      apiPod(
        'confined',
        {},
        { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'deny-write' } } },
      ),
    );
    const status = await waitFor(
      () => {
        const s = api.object('pods', 'kube-system', 'confined')?.status as
          { phase?: string; reason?: string; message?: string } | undefined;
        return s?.phase === 'Failed' ? s : undefined;
      },
      { timeoutMs: 60_000, what: 'confined Failed' },
    );
    expect(status).toMatchObject({
      reason: 'AppArmor',
      message: 'Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host',
    });
    const e = await event('confined', 'AppArmor');
    expect(e).toMatchObject({
      type: 'Warning',
      message: 'Cannot enforce AppArmor: AppArmor is not enabled on the host',
    });
    expect(await runtimePods('confined')).toEqual([]);
  });
});
