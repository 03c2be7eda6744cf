// A node handed over from a kubelet to bootlet, and back, for pods from the API server (the
// packaged agent, a real containerd, the fake API server).
//
// From a kubelet: a kube-proxy DaemonSet pod bound to the node, run by raw CRI calls with exactly the
// labels and annotations a kubelet 1.34 writes (test/fixtures/kubelet/api-pod-runtime-objects.json),
// beside an older pod of the same DaemonSet that was deleted while no agent ran. bootlet starts while
// the API server is away: both keep running until its first LIST; then the bound one is adopted under
// its UID (same container, no second sandbox, its status Running in the API) and the deleted one is
// stopped.
//
// To a kubelet: bootlet's own API pod carries what a kubelet reads to adopt it, and keeps running
// when bootlet is stopped with SIGTERM.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState, type KeyValueMap } from '../../../src/cri/cri-types.js';
import { kubeletContainerHash } from '../../../src/kuberuntime/container-hash.js';
import { listRuntimePods, readRuntimePod, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { buildSandboxConfig } from '../../../src/kuberuntime/sandbox-config.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { KUBELET_NODE, kubeletApiPodObjects } from '../../support/kubelet-runtime-objects.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';
import { hostContainerConfig } from '../../support/host-container-config.js';

const NODE = KUBELET_NODE; // the fixture's pod is bound to cp-1
const h = useAgentHarness('api-pod-handoff', NODE);
const SLEEP = ['sh', '-c', "trap 'exit 0' TERM; sleep 100000 & wait"];
const WAIT = 60_000;
const GONE_UID = '0b7e4f2a-91c3-4d5e-b6a7-c8d9e0f1a2b3';
const GONE_NAME = 'kube-proxy-q4w8n';
let api: FakeApiServer;
let nodeKubeconfig: string;

/** The fixture's pod, made runnable here: the local image and a command; everything else as the server holds it. */
function runnablePod(name: string): Pod {
  const pod = structuredClone(kubeletApiPodObjects().pod);
  const c = pod.spec!.containers[0]!;
  Object.assign(c, { image: TEST_IMAGES.busybox, command: SLEEP });
  delete c.securityContext; // privileged adds nothing to what is checked here
  const { uid: _uid, ...metadata } = pod.metadata!;
  return { ...pod, metadata: { ...metadata, name } };
}

/** Replaces the fixture's pod name and UID in every value (labels, log directory). */
function renamed(m: KeyValueMap, name: string, uid: string): KeyValueMap {
  const fx = kubeletApiPodObjects().sandbox.metadata;
  return Object.fromEntries(
    Object.entries(m).map(([k, v]) => [k, v.replaceAll(fx.uid, uid).replaceAll(fx.name, name)]),
  );
}

interface RawPod {
  sandboxId: string;
  containerId: string;
}

/** What a kubelet 1.34 started for the API pod `pod` (UID `uid`): the fixture's objects, for this name and UID. */
async function kubeletRuns(pod: Pod, uid: string): Promise<RawPod> {
  const fx = kubeletApiPodObjects();
  const name = pod.metadata!.name!;
  const { runtime, images } = h.cri();
  const container: Container = pod.spec!.containers[0]!;
  const labelled = { ...pod, metadata: { ...pod.metadata!, name, namespace: 'kube-system', uid } };
  const logDirectory = path.join(h.podLogsDir, `kube-system_${name}_${uid}`);
  fs.mkdirSync(path.join(logDirectory, container.name), { recursive: true });
  const base = buildSandboxConfig(labelled, { podLogsDir: h.podLogsDir, attempt: 0, resolvConf: '' });
  const sandboxConfig = {
    ...base,
    logDirectory,
    labels: renamed(fx.sandbox.labels, name, uid),
    annotations: fx.sandbox.annotations,
    linux: {
      ...base.linux,
      cgroupParent: (
        fx.sandbox as unknown as { linux: { cgroup_parent: { cgroupfs: string } } }
      ).linux.cgroup_parent.cgroupfs.replace(fx.sandbox.metadata.uid, uid),
    },
  };
  expect(sandboxConfig.metadata).toEqual({ ...fx.sandbox.metadata, name, uid });
  const sandboxId = await runtime.runPodSandbox(sandboxConfig);
  const imageRef = (await images.imageStatus({ image: container.image! }))?.id;
  if (!imageRef) throw new Error(`${container.image} is not imported`);
  const built = hostContainerConfig(labelled, container, { nodeName: NODE, imageRef });
  const config = {
    ...built,
    labels: renamed(fx.container.labels, name, uid),
    // The kubelet's hash of the container as the server holds it here (the local image).
    annotations: { ...fx.container.annotations, 'io.kubernetes.container.hash': kubeletContainerHash(container) },
    logPath: fx.container.log_path,
  };
  const containerId = await runtime.createContainer(sandboxId, config, sandboxConfig);
  await runtime.startContainer(containerId);
  return { sandboxId, containerId };
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

interface ApiPodStatus {
  metadata: { uid: string };
  status?: {
    phase?: string;
    containerStatuses?: { containerID?: string; restartCount?: number; state?: { running?: unknown } }[];
  };
}

const apiPod = (name: string) => api.object('pods', 'kube-system', name) as unknown as ApiPodStatus | undefined;

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  // The DaemonSet owner exists only in the pods' ownerReferences: the fake's GC must leave them be.
  api.garbageCollection(false);
  nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
});

afterAll(async () => {
  if (process.env.SHOW_AGENT_LOG) console.log(h.agent().lines.slice(-120).join('\n'));
  await api?.dispose();
});

describe('API pods from a kubelet to bootlet', () => {
  const name = kubeletApiPodObjects().pod.metadata!.name!;
  let adopted: RawPod;
  let gone: RawPod;

  it('adopts the bound pod under its UID and stops the deleted one only after the first LIST', async () => {
    const uid = api.seedObject('pods', runnablePod(name) as never).metadata.uid as string;
    adopted = await kubeletRuns(runnablePod(name), uid);
    // Deleted from the server while no agent ran: only the runtime still has it.
    gone = await kubeletRuns(runnablePod(GONE_NAME), GONE_UID);
    await api.stop();

    // A short resync: the later syncs of the adopted pod come within seconds.
    const agent = h.launch({ extraArgs: ['--v=3', '--sync-frequency=5s', `--kubeconfig=${nodeKubeconfig}`] });
    const held = await agent.waitForLog(
      (r) => r.msg === 'Pods from the API server keep running until it answers',
      'the API pods held while the server is away',
      WAIT,
    );
    expect(held.pods).toBe(2);
    expect(agent.records().some((r) => r.msg === 'API pods listed')).toBe(false);
    // Still the kubelet's containers, both running, while the server does not answer.
    expect(running((await runtimePods(name))[0])?.id).toBe(adopted.containerId);
    expect(running((await runtimePods(GONE_NAME))[0])?.id).toBe(gone.containerId);

    await api.start();
    const listed = await agent.waitForLog((r) => r.msg === 'API pods listed', 'the first LIST', WAIT);
    const stopping = await agent.waitForLog(
      (r) => r.msg === 'Found pod the API server no longer binds to this node, stopping it' && r.podUID === GONE_UID,
      'the deleted pod stopped',
      WAIT,
    );
    expect(Number(stopping.ts)).toBeGreaterThanOrEqual(Number(listed.ts));
    // In the log's order too (timestamps are to the millisecond): the LIST first, then the stop.
    const records = agent.records();
    const stoppedAt = records.findIndex((r) => r.msg === stopping.msg && r.podUID === GONE_UID);
    expect(stoppedAt).toBeGreaterThan(records.findIndex((r) => r.msg === 'API pods listed'));
    expect(
      records.slice(0, stoppedAt).some((r) => r.msg === 'Pods from the API server keep running until it answers'),
    ).toBe(true);
    await waitFor(async () => (await runtimePods(GONE_NAME)).every((p) => !running(p)), {
      timeoutMs: WAIT,
      what: 'the deleted pod’s container stopped',
    });

    // The bound pod: its worker found nothing to do, and its status is the kubelet's container, Running.
    const synced = await agent.waitForLog(
      (r) => r.msg === 'Pod synced' && r.podUID === uid,
      'the adopted pod synced',
      WAIT,
    );
    expect(synced).toMatchObject({ started: 0, killed: 0, sandboxCreated: false });
    const reported = await waitFor(
      () => {
        const o = apiPod(name);
        return o?.status?.phase === 'Running' && o.status.containerStatuses?.[0]?.state?.running ? o : undefined;
      },
      { timeoutMs: WAIT, what: 'the adopted pod Running in the API' },
    );
    expect(reported.metadata.uid).toBe(uid);
    expect(reported.status!.containerStatuses![0]).toMatchObject({
      containerID: `containerd://${adopted.containerId}`,
      restartCount: 0,
    });
    const after = await runtimePods(name);
    expect(after).toHaveLength(1);
    expect(after[0]!.uid).toBe(uid);
    expect(after[0]!.sandboxes.map((s) => s.id)).toEqual([adopted.sandboxId]);
    expect(after[0]!.containers.map((c) => c.id)).toEqual([adopted.containerId]);
    expect(running(after[0])?.id).toBe(adopted.containerId);
    expect(agent.records().filter((r) => r.severity === 'error')).toEqual([]);
  });

  it('keeps the adopted pod through later syncs: nothing is started twice', async () => {
    const uid = apiPod(name)!.metadata.uid;
    const agent = h.agent();
    const syncs = () => agent.records().filter((r) => r.msg === 'Pod synced' && r.podUID === uid);
    const n = syncs().length;
    // Its periodic resync (--sync-frequency=5s) runs the worker again; every sync finds nothing to do.
    await waitFor(() => syncs().length > n || undefined, { timeoutMs: WAIT, what: 'another sync of the adopted pod' });
    expect(syncs().every((r) => r.started === 0 && r.killed === 0 && r.sandboxCreated === false)).toBe(true);
    expect((await runtimePods(name)).flatMap((p) => p.containers.map((c) => c.id))).toEqual([adopted.containerId]);
  });
});

describe('API pods from bootlet to a kubelet', () => {
  const name = 'kube-proxy-b7t2m';

  it('writes what a kubelet reads to adopt an API pod, and leaves it running on SIGTERM', async () => {
    const fx = kubeletApiPodObjects();
    const uid = api.seedObject('pods', runnablePod(name) as never).metadata.uid as string;
    const rt = await waitFor(
      async () => {
        const p = (await runtimePods(name))[0];
        return running(p) ? p : undefined;
      },
      { timeoutMs: WAIT, what: 'bootlet’s API pod running' },
    );
    expect(rt.uid).toBe(uid);
    const { runtime } = h.cri();
    const sandbox = await runtime.podSandboxStatus(rt.sandboxes[0]!.id);
    const container = await runtime.containerStatus(running(rt)!.id);

    expect(sandbox.metadata).toEqual({ ...fx.sandbox.metadata, name, uid });
    expect(sandbox.labels).toEqual(renamed(fx.sandbox.labels, name, uid));
    // The kubelet's config.source and config.seen, and no config.hash (a static pod's only).
    const { 'kubernetes.io/config.seen': seen, ...annotations } = sandbox.annotations;
    const { 'kubernetes.io/config.seen': _fxSeen, ...fxAnnotations } = fx.sandbox.annotations;
    expect(annotations).toEqual(fxAnnotations);
    expect(seen).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);

    expect(container.labels).toEqual(renamed(fx.container.labels, name, uid));
    const want: KeyValueMap = {
      ...fx.container.annotations,
      'io.kubernetes.container.hash': kubeletContainerHash({ name: 'kube-proxy', image: TEST_IMAGES.busybox }),
    };
    const extra = Object.keys(container.annotations)
      .filter((k) => !(k in want))
      .sort();
    expect(extra).toEqual(['bootlet.io/container.hash', 'io.kubernetes.container.type']);
    expect(Object.fromEntries(Object.entries(container.annotations).filter(([k]) => k in want))).toEqual(want);
    expect(container.logPath).toBe(path.join(h.podLogsDir, `kube-system_${name}_${uid}`, fx.container.log_path));

    // Stopped as a service manager stops it: every API pod (the adopted one too) keeps running.
    const adoptedName = fx.pod.metadata!.name!;
    const before = { [name]: running(rt)!.id, [adoptedName]: running((await runtimePods(adoptedName))[0])!.id };
    expect(await h.agent().kill('SIGTERM')).toBe(0);
    for (const [n, id] of Object.entries(before)) {
      const now = await runtimePods(n);
      expect(now).toHaveLength(1);
      expect(running(now[0])?.id).toBe(id);
    }
    expect(
      h
        .agent()
        .records()
        .filter((r) => ['Killing container', 'Pod terminated'].includes(String(r.msg)) && r.podUID !== GONE_UID),
    ).toEqual([]);
  });
});
