// Which pods found running with no manifest bootlet may stop: only what a static source (or bootlet)
// made, or the API server when the agent reads it, and not while a refused manifest may declare it.
// The runtime pods here carry what a kubelet leaves on them (config.source on the sandbox, no bootlet hash on the containers).
import { describe, expect, it } from 'vitest';
import type { ManifestClaim, StaticPod } from '../../../src/config/types.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { PodWorkers } from '../../../src/podworkers/pod-workers.js';
import { kubeletContainerHash } from '../../../src/kuberuntime/container-hash.js';
import { ContainerState, PodSandboxState } from '../../../src/cri/cri-types.js';
import type { RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { waitFor } from '../../support/wait.js';
import { FakePodRuntime } from './fake-pod-runtime.js';

const WAIT = { timeoutMs: 5000 };

function staticPod(name: string, uid: string, namespace = 'kube-system'): StaticPod {
  return {
    uid,
    key: `${namespace}/${name}`,
    file: `/m/${name}.yaml`,
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, uid, annotations: { 'kubernetes.io/config.hash': uid } },
      spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'img' }] },
    },
  };
}

interface Seed {
  uid: string;
  name: string;
  namespace?: string;
  /** kubernetes.io/config.source on the sandbox; undefined: no such annotation. */
  source?: string;
  /** Made by bootlet: its container carries bootlet's whole-spec hash. */
  bootlet?: boolean;
}

/** A running pod as a kubelet (or another tool) left it in the runtime. */
function seed(rt: FakePodRuntime, s: Seed): RuntimePod {
  const namespace = s.namespace ?? 'kube-system';
  const pod: RuntimePod = {
    uid: s.uid,
    name: s.name,
    namespace,
    sandboxes: [
      {
        id: `sb-${s.uid}`,
        state: PodSandboxState.SANDBOX_READY,
        createdAt: 1,
        attempt: 0,
        ip: '',
        additionalIps: [],
        hasStatus: true,
        labels: {
          'io.kubernetes.pod.name': s.name,
          'io.kubernetes.pod.namespace': namespace,
          'io.kubernetes.pod.uid': s.uid,
        },
        annotations:
          s.source === undefined ? {} : { 'kubernetes.io/config.source': s.source, 'kubernetes.io/config.hash': s.uid },
      },
    ],
    containers: [
      {
        id: `c-${s.uid}`,
        sandboxId: `sb-${s.uid}`,
        name: 'main',
        state: ContainerState.CONTAINER_RUNNING,
        createdAt: 2,
        startedAt: 2,
        finishedAt: 0,
        exitCode: 0,
        reason: '',
        message: '',
        imageRef: 'sha256:x',
        image: 'img',
        hasStatus: true,
        meta: {
          podName: s.name,
          podNamespace: namespace,
          podUid: s.uid,
          containerName: 'main',
          hash: kubeletContainerHash({ name: 'main', image: 'img' }),
          ...(s.bootlet ? { specHash: 'abc' } : {}),
          restartCount: 0,
          terminationGracePeriodSeconds: 1,
        },
      },
    ],
  };
  rt.pods.set(s.uid, pod);
  return structuredClone(pod);
}

function setup(readSources?: ReadonlySet<string>) {
  const runtime = new FakePodRuntime();
  const { logger, lines } = memoryLogger(2);
  const workers = new PodWorkers({ runtime, cache: runtime.cache, logger, syncFrequencyMs: 60_000, readSources });
  const logs = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { runtime, workers, logs };
}

const isRunning = (rt: FakePodRuntime, uid: string) =>
  rt.pods.get(uid)?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING) ?? false;
const stops = (rt: FakePodRuntime) => rt.journal.filter((l) => l.startsWith('stop ') || l.startsWith('cleanup '));

describe('PodWorkers: pods found running with no manifest', () => {
  it('never stops API-sourced pods or pods no static source made, and stops static and bootlet-made ones', async () => {
    const { runtime, workers, logs } = setup();
    const found = new Map(
      [
        seed(runtime, { uid: 'proxy', name: 'kube-proxy-x1', source: 'api' }),
        seed(runtime, { uid: 'other', name: 'made-by-a-tool', namespace: 'default' }),
        seed(runtime, { uid: 'old-etcd', name: 'etcd-n1', source: 'file' }),
        seed(runtime, { uid: 'old-web', name: 'web-n1', source: 'http' }),
        seed(runtime, { uid: 'mine', name: 'sleeper-n1', bootlet: true }),
      ].map((p) => [p.uid, p]),
    );
    workers.adoptRuntimePods(found);
    await waitFor(() => !runtime.pods.has('old-etcd') && !runtime.pods.has('old-web') && !runtime.pods.has('mine'), {
      ...WAIT,
      what: 'static orphans removed',
    });
    await workers.idle();
    expect(isRunning(runtime, 'proxy')).toBe(true);
    expect(isRunning(runtime, 'other')).toBe(true);
    expect(stops(runtime).filter((l) => l.includes('proxy') || l.includes('other'))).toEqual([]);
    const leftAlone = logs().filter((r) => r.msg === 'Leaving runtime pod alone: no static source made it');
    expect(leftAlone.map((r) => [r.pod, r.source])).toEqual([
      ['kube-system/kube-proxy-x1', 'api'],
      ['default/made-by-a-tool', ''],
    ]);
  });

  it('stops an API pod a kubelet ran when this agent reads the API server, even one a refused manifest names', async () => {
    const { runtime, workers, logs } = setup(new Set(['file', 'api']));
    workers.refusedClaims([{ file: '/m/x.yaml', podKey: 'kube-system/kube-proxy-x1', message: 'bad' }]);
    const found = new Map(
      [
        seed(runtime, { uid: 'proxy', name: 'kube-proxy-x1', source: 'api' }),
        seed(runtime, { uid: 'other', name: 'made-by-a-tool', namespace: 'default' }),
      ].map((p) => [p.uid, p]),
    );
    workers.adoptRuntimePods(found);
    await waitFor(() => !runtime.pods.has('proxy'), {
      ...WAIT,
      what: 'the API pod the server no longer binds removed',
    });
    await workers.idle();
    expect(isRunning(runtime, 'other')).toBe(true);
    expect(workers.heldPods()).toEqual([]);
    expect(
      logs()
        .filter((r) => r.msg === 'Found pod the API server no longer binds to this node, stopping it')
        .map((r) => r.podUID),
    ).toEqual(['proxy']);
  });

  it('keeps the pod of a refused manifest running, and stops it once the file is deleted', async () => {
    const { runtime, workers, logs } = setup();
    const claim: ManifestClaim = {
      file: '/m/kube-apiserver.yaml',
      podKey: 'kube-system/kube-apiserver-n1',
      message: 'spec.containers[0].image: Required value',
    };
    workers.refusedClaims([claim]);
    const held = seed(runtime, { uid: 'kubelet-api', name: 'kube-apiserver-n1', source: 'file' });
    const orphan = seed(runtime, { uid: 'kubelet-old', name: 'kube-scheduler-n1', source: 'file' });
    workers.adoptRuntimePods(
      new Map([
        [held.uid, held],
        [orphan.uid, orphan],
      ]),
    );
    await waitFor(() => !runtime.pods.has('kubelet-old'), { ...WAIT, what: 'the unclaimed orphan removed' });
    await workers.idle();
    expect(isRunning(runtime, 'kubelet-api')).toBe(true);
    expect(logs().filter((r) => r.msg === 'Keeping pod running: its manifest is refused')).toEqual([
      expect.objectContaining({
        pod: 'kube-system/kube-apiserver-n1',
        podUID: 'kubelet-api',
        file: claim.file,
        err: claim.message,
      }),
    ]);
    expect(workers.heldPods()).toEqual([
      { uid: 'kubelet-api', key: 'kube-system/kube-apiserver-n1', file: claim.file, message: claim.message },
    ]);

    // Another file's refusal changes nothing for it; the file going away does.
    workers.refusedClaims([claim, { file: '/m/x.yaml', podKey: 'default/x-n1', message: 'bad' }]);
    await workers.idle();
    expect(isRunning(runtime, 'kubelet-api')).toBe(true);
    workers.refusedClaims([]);
    await waitFor(() => !runtime.pods.has('kubelet-api'), {
      ...WAIT,
      what: 'the held pod stopped once its file is gone',
    });
    expect(workers.heldPods()).toEqual([]);
  });

  it('replaces a held pod when its manifest becomes valid, never running both at once', async () => {
    const { runtime, workers } = setup();
    const claim: ManifestClaim = {
      file: '/m/kube-apiserver.yaml',
      podKey: 'kube-system/kube-apiserver-n1',
      message: 'bad',
    };
    workers.refusedClaims([claim]);
    const held = seed(runtime, { uid: 'kubelet-api', name: 'kube-apiserver-n1', source: 'file' });
    workers.adoptRuntimePods(new Map([[held.uid, held]]));
    await workers.idle();
    expect(stops(runtime)).toEqual([]);
    // The fixed file: its pod arrives first, the claim goes after (either order must work).
    workers.apply({ op: 'ADD', pod: staticPod('kube-apiserver-n1', 'uid-fixed') });
    workers.refusedClaims([]);
    await waitFor(() => isRunning(runtime, 'uid-fixed'), { ...WAIT, what: 'the fixed pod running' });
    const stopHeld = runtime.journal.indexOf('stop kube-apiserver-n1 kubelet-api main');
    const startNew = runtime.journal.indexOf('createSandbox kube-apiserver-n1 uid-fixed');
    expect(stopHeld).toBeGreaterThanOrEqual(0);
    expect(startNew).toBeGreaterThan(stopHeld);
    await waitFor(() => !runtime.pods.has('kubelet-api'), { ...WAIT, what: 'the held pod removed' });
  });

  it('a fixed manifest whose claim goes first still waits for the held pod to stop', async () => {
    const { runtime, workers } = setup();
    workers.refusedClaims([{ file: '/m/etcd.yaml', podKey: 'kube-system/etcd-n1', message: 'bad' }]);
    const held = seed(runtime, { uid: 'kubelet-etcd', name: 'etcd-n1', source: 'file' });
    workers.adoptRuntimePods(new Map([[held.uid, held]]));
    await workers.idle();
    workers.refusedClaims([]);
    workers.apply({ op: 'ADD', pod: staticPod('etcd-n1', 'uid-fixed') });
    await waitFor(() => isRunning(runtime, 'uid-fixed'), { ...WAIT, what: 'the fixed pod running' });
    expect(runtime.journal.indexOf('createSandbox etcd-n1 uid-fixed')).toBeGreaterThan(
      runtime.journal.indexOf('stop etcd-n1 kubelet-etcd main'),
    );
  });

  it('a file that cannot be parsed may declare any pod: every static orphan is kept until it goes', async () => {
    const { runtime, workers, logs } = setup();
    const unknown: ManifestClaim = {
      file: '/m/broken.yaml',
      message: 'yaml: line 3: mapping values are not allowed here',
    };
    workers.refusedClaims([unknown]);
    const a = seed(runtime, { uid: 'kubelet-etcd', name: 'etcd-n1', source: 'file' });
    const b = seed(runtime, { uid: 'kubelet-api', name: 'kube-apiserver-n1', source: 'file' });
    const proxy = seed(runtime, { uid: 'proxy', name: 'kube-proxy-x1', source: 'api' });
    workers.apply({ op: 'ADD', pod: staticPod('sleeper-n1', 'uid-sleeper') });
    workers.adoptRuntimePods(new Map([a, b, proxy].map((p) => [p.uid, p])));
    await waitFor(() => isRunning(runtime, 'uid-sleeper'), { ...WAIT, what: 'the accepted pod running' });
    await workers.idle();
    expect(stops(runtime)).toEqual([]);
    expect(
      logs()
        .filter((r) => r.msg === 'Keeping pod running: its manifest is refused')
        .map((r) => [r.pod, r.file]),
    ).toEqual([
      ['kube-system/etcd-n1', '/m/broken.yaml'],
      ['kube-system/kube-apiserver-n1', '/m/broken.yaml'],
    ]);
    // Parsed at last, it declares the apiserver: etcd's pod has no manifest any more.
    workers.refusedClaims([
      { file: '/m/broken.yaml', podKey: 'kube-system/kube-apiserver-n1', message: 'still refused' },
    ]);
    await waitFor(() => !runtime.pods.has('kubelet-etcd'), { ...WAIT, what: 'etcd orphan stopped' });
    expect(isRunning(runtime, 'kubelet-api')).toBe(true);
    // The new reason is said once for the pod still held.
    expect(
      logs()
        .filter((r) => r.msg === 'Keeping pod running: its manifest is refused' && r.err === 'still refused')
        .map((r) => r.pod),
    ).toEqual(['kube-system/kube-apiserver-n1']);
    expect(isRunning(runtime, 'proxy')).toBe(true);
  });

  it('never touches, nor builds a path from, a runtime pod whose identity labels are not valid', async () => {
    const { runtime, workers, logs } = setup();
    const bad = [
      seed(runtime, { uid: 'evil-1', name: '../../../etc', source: 'file' }),
      seed(runtime, { uid: '../../x', name: 'etcd-n1', source: 'file' }),
      seed(runtime, { uid: 'evil-3', name: 'etcd-n1', namespace: 'kube_system/..', source: 'file', bootlet: true }),
    ];
    workers.adoptRuntimePods(new Map(bad.map((p) => [p.uid, p])));
    await workers.idle();
    expect(stops(runtime)).toEqual([]);
    expect(runtime.journal).toEqual([]);
    expect(workers.snapshot()).toEqual([]);
    expect(
      logs()
        .filter((r) => r.msg === 'Leaving runtime pod alone: its labels are not a valid pod identity')
        .map((r) => r.podUID),
    ).toEqual(['evil-1', '../../x', 'evil-3']);
  });
});
