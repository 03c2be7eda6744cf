// A node handed over from a kubelet to bootlet, and the other way, with no container restarted.
//
// From a kubelet: the runtime pods a kubelet 1.34 would leave on a kubeadm control-plane node are
// made with raw CRI calls, labelled and annotated exactly as test/fixtures/kubelet/runtime-objects.json
// says (etcd, kube-apiserver, kube-scheduler), beside a kube-proxy-like pod from the API server and
// a crictl-style pod with no kubelet labels. bootlet then starts on the same manifests, one of them
// refused: it adopts the two as they run, under the kubelet's UIDs, keeps the refused one running,
// and touches nothing else.
//
// To a kubelet: a manifest with a pinned metadata.uid is run by bootlet, and every label and
// annotation a kubelet reads to adopt the pod is checked against what a kubelet 1.34 writes.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Container, Pod, PodList } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { TEST_IMAGES } from '../../../dev/images.js';
import { loadManifest } from '../../../src/config/manifest.js';
import { kubeletContainerHash } from '../../../src/kuberuntime/container-hash.js';
import { ContainerState, enumName, PodSandboxState, type KeyValueMap } from '../../../src/cri/cri-types.js';
import type { LabelledPod } from '../../../src/k8s/pod.js';
import { buildSandboxConfig } from '../../../src/kuberuntime/sandbox-config.js';
import { BOOTLET_EXE } from '../../support/agent.js';
import { kubeadmManifest, KUBELET_NODE, kubeletPodObjects } from '../../support/kubelet-runtime-objects.js';
import { freePorts } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { taskPid } from '../pleg/pleg-pod.js';
import { useAgentHarness } from './harness.js';
import { hostContainerConfig } from '../../support/host-container-config.js';

const NODE = KUBELET_NODE; // the fixture's node: pod names are exactly the kubelet's
const h = useAgentHarness('handoff', NODE);
const SLEEP = ['sh', '-c', "trap 'exit 0' TERM; sleep 100000 & wait"];
const WAIT = 60_000;

/**
 * A kubeadm 1.34 manifest that runs here: the local image and a command that works without
 * certificates; no probes (they would aim at ports other tests use) and no volumes. Metadata,
 * ports, resources and everything else stay as kubeadm writes them.
 */
function runnable(component: string, image: string, command: string[], edit: (pod: Pod) => void = () => {}): string {
  const pod = YAML.parse(kubeadmManifest(component).text) as Pod;
  const c = pod.spec!.containers[0]!;
  Object.assign(c, { image, command });
  delete c.livenessProbe;
  delete c.readinessProbe;
  delete c.startupProbe;
  delete c.volumeMounts;
  delete pod.spec!.volumes;
  edit(pod);
  return YAML.stringify(pod);
}

interface RawPod {
  sandboxId: string;
  containerId: string;
}

/** Runs a host-network pod by raw CRI calls, with exactly the given labels and annotations. */
async function runRaw(
  pod: LabelledPod,
  container: Container,
  objects: {
    sandboxLabels: KeyValueMap;
    sandboxAnnotations: KeyValueMap;
    containerLabels: KeyValueMap;
    containerAnnotations: KeyValueMap;
    logDirectory: string;
    logPath: string;
    cgroupParent?: string;
  },
): Promise<RawPod> {
  const { runtime, images } = h.cri();
  fs.mkdirSync(path.join(objects.logDirectory, container.name), { recursive: true });
  const base = buildSandboxConfig(pod, { podLogsDir: h.podLogsDir, attempt: 0, resolvConf: '' });
  const sandboxConfig = {
    ...base,
    logDirectory: objects.logDirectory,
    labels: objects.sandboxLabels,
    annotations: objects.sandboxAnnotations,
    linux: { ...base.linux, cgroupParent: objects.cgroupParent ?? '' },
  };
  const sandboxId = await runtime.runPodSandbox(sandboxConfig);
  const imageRef = (await images.imageStatus({ image: container.image! }))?.id;
  if (!imageRef) throw new Error(`${container.image} is not imported`);
  const built = hostContainerConfig(pod, container, { nodeName: NODE, imageRef });
  const config = {
    ...built,
    labels: objects.containerLabels,
    annotations: objects.containerAnnotations,
    logPath: objects.logPath,
  };
  const containerId = await runtime.createContainer(sandboxId, config, sandboxConfig);
  await runtime.startContainer(containerId);
  return { sandboxId, containerId };
}

/** What a kubelet 1.34 started from `manifest` for a kubeadm component: the fixture's objects, verbatim. */
async function kubeletRuns(component: string, manifest: string): Promise<RawPod> {
  const fx = kubeletPodObjects(component);
  const loaded = loadManifest(path.join(h.manifests, `${component}.yaml`), manifest, NODE, new Date());
  if ('error' in loaded) throw new Error(loaded.error.message);
  const pod = { ...loaded.pod.pod, metadata: { ...loaded.pod.pod.metadata, uid: fx.sandbox.metadata.uid } };
  const container = pod.spec!.containers[0]!;
  expect(fx.container.metadata.name).toBe(container.name);
  return runRaw(pod, container, {
    sandboxLabels: fx.sandbox.labels,
    sandboxAnnotations: fx.sandbox.annotations,
    containerLabels: fx.container.labels,
    // The kubelet's hash of the container as this manifest names it (the local image).
    containerAnnotations: {
      ...fx.container.annotations,
      'io.kubernetes.container.hash': kubeletContainerHash(container),
    },
    logDirectory: path.join(h.podLogsDir, path.basename(fx.sandbox.log_directory)),
    logPath: fx.container.log_path,
    cgroupParent: (fx.sandbox as unknown as { linux: { cgroup_parent: { cgroupfs: string } } }).linux.cgroup_parent
      .cgroupfs,
  });
}

const PROXY_UID = '9d3c5a40-7f1e-4c8b-a2d6-0e5b71c3f482';

/** A DaemonSet pod as a kubelet runs it: config.source api, a UUID, the controller's labels. */
async function apiPodRuns(): Promise<RawPod> {
  const container: Container = { name: 'kube-proxy', image: TEST_IMAGES.busybox, command: SLEEP };
  const identity = {
    'io.kubernetes.pod.name': 'kube-proxy-x7k2p',
    'io.kubernetes.pod.namespace': 'kube-system',
    'io.kubernetes.pod.uid': PROXY_UID,
  };
  const pod: LabelledPod = {
    metadata: { name: 'kube-proxy-x7k2p', namespace: 'kube-system', uid: PROXY_UID },
    spec: { hostNetwork: true, containers: [container] },
  };
  return runRaw(pod, container, {
    sandboxLabels: {
      ...identity,
      'controller-revision-hash': '7b8d5c6f9',
      'k8s-app': 'kube-proxy',
      'pod-template-generation': '1',
    },
    sandboxAnnotations: { 'kubernetes.io/config.seen': '2025-09-01T10:00:05.5Z', 'kubernetes.io/config.source': 'api' },
    containerLabels: { ...identity, 'io.kubernetes.container.name': 'kube-proxy' },
    containerAnnotations: {
      'io.kubernetes.container.hash': kubeletContainerHash(container),
      'io.kubernetes.container.restartCount': '0',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.pod.terminationGracePeriod': '30',
    },
    logDirectory: path.join(h.podLogsDir, `kube-system_kube-proxy-x7k2p_${PROXY_UID}`),
    logPath: 'kube-proxy/0.log',
  });
}

/** `crictl runp` / `crictl create` with a plain config: no kubelet labels at all. */
async function crictlPodRuns(): Promise<RawPod> {
  const container: Container = { name: 'debug', image: TEST_IMAGES.busybox, command: SLEEP };
  const pod: LabelledPod = {
    metadata: { name: 'debug', namespace: 'default', uid: 'crictl-debug-0001' },
    spec: { hostNetwork: true, containers: [container] },
  };
  return runRaw(pod, container, {
    sandboxLabels: { app: 'debug' },
    sandboxAnnotations: {},
    containerLabels: {},
    containerAnnotations: {},
    logDirectory: path.join(h.dir, 'crictl-logs'),
    logPath: 'debug.log',
  });
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout: 30_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
}

async function bootletPods(): Promise<Pod[]> {
  return (JSON.parse(await run(BOOTLET_EXE, ['pods', '-o', 'json', `--root-dir=${h.rootDir}`])) as PodList).items;
}

/** Every container and sandbox in the runtime, with its state and restart count. */
async function runtimeState(): Promise<{ sandboxes: string[]; containers: string[] }> {
  const { runtime } = h.cri();
  const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(), runtime.listContainers()]);
  return {
    sandboxes: sandboxes.map((s) => `${s.id} ${enumName(PodSandboxState, s.state)}`).sort(),
    containers: containers
      .map(
        (c) =>
          `${c.id} ${c.podSandboxId} ${enumName(ContainerState, c.state)} restartCount=${c.annotations['io.kubernetes.container.restartCount'] ?? '-'}`,
      )
      .sort(),
  };
}

describe('from a kubelet to bootlet', () => {
  const created: Record<string, RawPod> = {};
  const expected: { sandboxes: string[]; containers: string[] } = { sandboxes: [], containers: [] };
  let manifests: Record<string, string> = {};

  it('adopts the kubelet’s static pods as they run, keeps the refused one, and leaves other pods alone', async () => {
    const [client, peer, metrics] = await freePorts(3);
    const etcdCommand = [
      'etcd',
      '--name=cp-1',
      '--data-dir=/var/lib/etcd',
      '--logger=zap',
      `--listen-client-urls=http://127.0.0.1:${client}`,
      `--advertise-client-urls=http://127.0.0.1:${client}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=cp-1=http://127.0.0.1:${peer}`,
      `--listen-metrics-urls=http://127.0.0.1:${metrics}`,
    ];
    manifests = {
      etcd: runnable('etcd', TEST_IMAGES.etcd, etcdCommand),
      'kube-apiserver': runnable('kube-apiserver', TEST_IMAGES.busybox, SLEEP),
      'kube-scheduler': runnable('kube-scheduler', TEST_IMAGES.busybox, SLEEP),
    };
    for (const [component, text] of Object.entries(manifests)) created[component] = await kubeletRuns(component, text);
    created['kube-proxy'] = await apiPodRuns();
    created.crictl = await crictlPodRuns();
    Object.assign(expected, await runtimeState());
    expect(expected.containers.filter((c) => c.includes('CONTAINER_RUNNING'))).toHaveLength(5);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${client}/health`).catch(() => undefined))?.ok, {
      timeoutMs: WAIT,
      what: 'the kubelet’s etcd healthy',
    });

    // The same manifests in bootlet's directory, the scheduler's refused (an image is required).
    h.write('etcd.yaml', manifests.etcd!);
    h.write('kube-apiserver.yaml', manifests['kube-apiserver']!);
    h.write(
      'kube-scheduler.yaml',
      runnable(
        'kube-scheduler',
        TEST_IMAGES.busybox,
        SLEEP,
        (pod) => delete (pod.spec!.containers[0] as { image?: string }).image,
      ),
    );
    const agent = h.launch();

    await agent.waitForLog((r) => r.msg === 'Manifests read, adopting running pods', 'adoption', WAIT);
    for (const component of ['etcd', 'kube-apiserver']) {
      const uid = kubeletPodObjects(component).sandbox.metadata.uid;
      await agent.waitForLog(
        (r) =>
          r.msg === 'Adopting the running pod a kubelet started from the same manifest' &&
          r.podUID === uid &&
          r.pod === `kube-system/${component}-cp-1`,
        `${component} adopted`,
      );
    }
    const schedulerFile = path.join(h.manifests, 'kube-scheduler.yaml');
    const held = await agent.waitForLog(
      (r) => r.msg === 'Keeping pod running: its manifest is refused',
      'the scheduler held',
    );
    expect(held).toMatchObject({
      pod: 'kube-system/kube-scheduler-cp-1',
      podUID: kubeletPodObjects('kube-scheduler').sandbox.metadata.uid,
      file: schedulerFile,
    });
    expect(String(held.err)).toContain('image');
    expect(agent.records().find((r) => r.msg === 'Static pod manifest refused')).toMatchObject({ file: schedulerFile });
    expect(agent.records().find((r) => r.msg === 'Leaving runtime pod alone: no static source made it')).toMatchObject({
      pod: 'kube-system/kube-proxy-x7k2p',
      podUID: PROXY_UID,
      source: 'api',
    });

    // `bootlet pods` shows the kubelet's UIDs and containers, running, never restarted.
    const pods = await waitFor(
      async () => {
        const items = await bootletPods();
        const running = items.filter((p) => p.status?.containerStatuses?.[0]?.state?.running);
        return running.length === 2 ? items : undefined;
      },
      { timeoutMs: WAIT, what: 'bootlet pods to show etcd and kube-apiserver running' },
    );
    expect(
      pods
        .map((p) => [
          p.metadata?.name,
          p.metadata?.uid,
          p.metadata?.annotations?.['kubernetes.io/config.hash'],
          p.status?.containerStatuses?.[0]?.containerID,
          p.status?.containerStatuses?.[0]?.restartCount,
        ])
        .sort(),
    ).toEqual(
      ['etcd', 'kube-apiserver'].map((c) => {
        const uid = kubeletPodObjects(c).sandbox.metadata.uid;
        return [`${c}-cp-1`, uid, uid, `containerd://${created[c]!.containerId}`, 0];
      }),
    );

    // Nothing in the runtime was stopped, replaced or added.
    expect(await runtimeState()).toEqual(expected);
    expect(
      agent
        .records()
        .filter(
          (r) =>
            [
              'Found pod with no manifest, stopping it',
              'Static pod changed, replacing it',
              'Pod terminated',
              'Killing container',
            ].includes(String(r.msg)) && r.v === 0,
        ),
    ).toEqual([]);
    expect((await fetch(`http://127.0.0.1:${client}/health`))?.ok).toBe(true);
  });

  it('replaces the kept pod once its manifest is fixed, never running both', async () => {
    const agent = h.agent();
    const kubeletUid = kubeletPodObjects('kube-scheduler').sandbox.metadata.uid;
    h.write('kube-scheduler.yaml', manifests['kube-scheduler']!);
    const terminated = await agent.waitForLog(
      (r) => r.msg === 'Pod terminated' && r.podUID === kubeletUid,
      'the kept scheduler stopped',
      WAIT,
    );
    const fresh = await waitFor(
      async () =>
        (await h.pods('kube-scheduler')).find(
          (p) => p.uid !== kubeletUid && p.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING),
        ),
      { timeoutMs: WAIT, what: 'the new scheduler running' },
    );
    expect(fresh.sandboxes[0]!.createdAt / 1e6).toBeGreaterThanOrEqual(Number(terminated.ts) * 1000);
    await waitFor(async () => !(await h.pods('kube-scheduler')).some((p) => p.uid === kubeletUid), {
      timeoutMs: WAIT,
      what: 'the kept scheduler removed',
    });
    // The adopted pods and the pods bootlet does not own are still the very same.
    const now = await runtimeState();
    for (const c of ['etcd', 'kube-apiserver', 'kube-proxy', 'crictl']) {
      expect(now.containers).toContain(expected.containers.find((x) => x.startsWith(created[c]!.containerId)));
      expect(now.sandboxes).toContain(expected.sandboxes.find((x) => x.startsWith(created[c]!.sandboxId)));
    }
  });
});

describe('from bootlet to a kubelet', () => {
  it('writes, for a pinned UID, every label and annotation a kubelet reads to adopt the pod', async () => {
    const fx = kubeletPodObjects('kube-controller-manager');
    const uid = fx.sandbox.metadata.uid;
    h.write(
      'kube-controller-manager.yaml',
      runnable('kube-controller-manager', TEST_IMAGES.busybox, SLEEP, (pod) => Object.assign(pod.metadata!, { uid })),
    );
    const rt = await waitFor(
      async () =>
        (await h.pods('kube-controller-manager')).find((p) =>
          p.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING),
        ),
      { timeoutMs: WAIT, what: 'the pinned controller-manager running' },
    );
    // Both agents honour a pinned UID: the kubelet would compute the very same pod identity.
    expect(rt.uid).toBe(uid);
    const { runtime } = h.cri();
    const sandbox = await runtime.podSandboxStatus(rt.sandboxes[0]!.id);
    const container = await runtime.containerStatus(rt.containers[0]!.id);

    // The sandbox: metadata, the pod's labels + identity, the pod's annotations + config.*, host network.
    expect(sandbox.metadata).toEqual(fx.sandbox.metadata);
    expect(sandbox.labels).toEqual(fx.sandbox.labels);
    const { 'kubernetes.io/config.seen': seen, ...annotations } = sandbox.annotations;
    const { 'kubernetes.io/config.seen': _fxSeen, ...fxAnnotations } = fx.sandbox.annotations;
    expect(annotations).toEqual(fxAnnotations);
    expect(seen).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    // Host network, as the kubelet checks (podSandboxChanged compares the network namespace mode).
    const pid = await taskPid(h.cd(), rt.containers[0]!.id);
    expect(fs.readlinkSync(`/proc/${pid}/ns/net`)).toBe(fs.readlinkSync('/proc/self/ns/net'));

    // The container: identity labels only; each annotation the kubelet writes, with the kubelet's
    // hash of the container as the manifest names it (bootlet adds only its own two).
    expect(container.labels).toEqual(fx.container.labels);
    const spec = { name: 'kube-controller-manager', image: TEST_IMAGES.busybox };
    const want: KeyValueMap = {
      ...fx.container.annotations,
      'io.kubernetes.container.hash': kubeletContainerHash(spec),
    };
    const { 'io.kubernetes.container.ports': ports, ...rest } = container.annotations;
    const { 'io.kubernetes.container.ports': wantPorts, ...wantRest } = want;
    expect(JSON.parse(ports!)).toEqual(JSON.parse(wantPorts!)); // the kubelet decodes it; key order does not matter
    const extra = Object.keys(rest)
      .filter((k) => !(k in wantRest))
      .sort();
    expect(extra).toEqual(['bootlet.io/container.hash', 'io.kubernetes.container.type']);
    expect(Object.fromEntries(Object.entries(rest).filter(([k]) => k in wantRest))).toEqual(wantRest);

    // Logs where the kubelet (and log shippers) look: <pod logs>/<ns>_<name>_<uid>/<container>/<n>.log.
    const logDir = path.join(h.podLogsDir, path.basename(fx.sandbox.log_directory));
    expect(container.logPath).toBe(path.join(logDir, fx.container.log_path));
    expect(fs.existsSync(container.logPath)).toBe(true);

    // And `bootlet pods` (the mirror pod's source) carries the pinned UID as config.hash.
    const listed = (await bootletPods()).find((p) => p.metadata?.name === 'kube-controller-manager-cp-1');
    expect([listed?.metadata?.uid, listed?.metadata?.annotations?.['kubernetes.io/config.hash']]).toEqual([uid, uid]);
  });
});
