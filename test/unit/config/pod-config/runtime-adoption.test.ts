// What becomes of the pods the runtime holds at start (runtime-adoption.ts), with the pod workers
// carrying out the stops: bootlet stops only what a static source (or bootlet) made, or the API server
// when the agent reads it; never while a refused manifest may declare it; never while its source has
// not answered. The runtime pods here carry what a kubelet leaves on them (config.source on the
// sandbox, no bootlet hash on the containers).
import { describe, expect, it } from 'vitest';
import { PodConfig, type SourceName } from '../../../../src/config/pod-config/pod-config.js';
import type { ManifestClaim, PodUpdate, StaticPod } from '../../../../src/config/types.js';
import { ContainerState } from '../../../../src/cri/cri-types.js';
import type { RuntimePod } from '../../../../src/kuberuntime/runtime-pods.js';
import { memoryLogger } from '../../../../src/log/logger.js';
import { PodWorkers } from '../../../../src/podworkers/pod-workers.js';
import { adoptionOf, runtimePodOf, type RuntimePodSeed } from '../../../support/runtime-pods.js';
import { waitFor } from '../../../support/wait.js';
import { FakePodRuntime } from '../../podworkers/fake-pod-runtime.js';

const WAIT = { timeoutMs: 5000 };

function staticPod(name: string, uid: string, namespace = 'kube-system', source = 'file'): StaticPod {
  return {
    uid,
    key: `${namespace}/${name}`,
    file: `/m/${name}.yaml`,
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace,
        uid,
        annotations: { 'kubernetes.io/config.hash': uid, 'kubernetes.io/config.source': source },
      },
      spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'img' }] },
    },
  };
}

/** A running pod as a kubelet (or another tool) left it in the runtime. */
function seed(rt: FakePodRuntime, s: RuntimePodSeed): RuntimePod {
  const pod = runtimePodOf(s);
  rt.pods.set(s.uid, pod);
  return structuredClone(pod);
}

/** The desired set (reading `sources`), the workers on a fake runtime, and the adoption between them. */
function setup(sources: SourceName[] = ['file']) {
  const runtime = new FakePodRuntime();
  const { logger, lines } = memoryLogger(2);
  const config = new PodConfig({ sources, logger });
  const workers = new PodWorkers({ runtime, cache: runtime.cache, logger, syncFrequencyMs: 60_000, desired: config });
  config.subscribe((u) => workers.apply(u));
  const logs = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const file = config.feed('file');
  /** The runtime's first full read finds `found`; the manifest path has been read (its claims told first). */
  const adopt = async (found: RuntimePod[]): Promise<void> => {
    const adopted = adoptionOf(config, found, {
      runs: (uid) => workers.has(uid),
      stop: (uid, pod, message) => workers.stopRuntimePod(uid, pod, message),
      adopted: () => workers.start((uid) => config.foundAtStart(uid)),
    });
    file.ready();
    await adopted;
  };
  const claims = (c: readonly ManifestClaim[]) => file.refusedClaims!(c);
  const add = (sp: StaticPod) => file.update({ op: 'ADD', pod: sp });
  return { runtime, config, workers, logs, adopt, claims, add };
}

const isRunning = (rt: FakePodRuntime, uid: string) =>
  rt.pods.get(uid)?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING) ?? false;
const stops = (rt: FakePodRuntime) => rt.journal.filter((l) => l.startsWith('stop ') || l.startsWith('cleanup '));

describe('runtime pods found running with no manifest', () => {
  it('never stops API-sourced pods or pods no static source made, and stops static and bootlet-made ones', async () => {
    const { runtime, workers, logs, adopt } = setup();
    await adopt([
      seed(runtime, { uid: 'proxy', name: 'kube-proxy-x1', source: 'api' }),
      seed(runtime, { uid: 'other', name: 'made-by-a-tool', namespace: 'default' }),
      seed(runtime, { uid: 'old-etcd', name: 'etcd-n1', source: 'file' }),
      seed(runtime, { uid: 'old-web', name: 'web-n1', source: 'http' }),
      seed(runtime, { uid: 'mine', name: 'sleeper-n1', bootlet: true }),
    ]);
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
    const { runtime, config, workers, logs, adopt, claims } = setup(['file', 'api']);
    claims([{ file: '/m/x.yaml', podKey: 'kube-system/kube-proxy-x1', message: 'bad' }]);
    // The API server has answered, without the pod.
    config.feed('api').ready();
    await adopt([
      seed(runtime, { uid: 'proxy', name: 'kube-proxy-x1', source: 'api' }),
      seed(runtime, { uid: 'other', name: 'made-by-a-tool', namespace: 'default' }),
    ]);
    await waitFor(() => !runtime.pods.has('proxy'), {
      ...WAIT,
      what: 'the API pod the server no longer binds removed',
    });
    await workers.idle();
    expect(isRunning(runtime, 'other')).toBe(true);
    expect(config.heldPods()).toEqual([]);
    expect(
      logs()
        .filter((r) => r.msg === 'Found pod the API server no longer binds to this node, stopping it')
        .map((r) => r.podUID),
    ).toEqual(['proxy']);
  });

  it('keeps the pod of a refused manifest running, and stops it once the file is deleted', async () => {
    const { runtime, config, workers, logs, adopt, claims } = setup();
    const claim: ManifestClaim = {
      file: '/m/kube-apiserver.yaml',
      podKey: 'kube-system/kube-apiserver-n1',
      message: 'spec.containers[0].image: Required value',
    };
    claims([claim]);
    await adopt([
      seed(runtime, { uid: 'kubelet-api', name: 'kube-apiserver-n1', source: 'file' }),
      seed(runtime, { uid: 'kubelet-old', name: 'kube-scheduler-n1', source: 'file' }),
    ]);
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
    expect(config.heldPods()).toEqual([
      { uid: 'kubelet-api', key: 'kube-system/kube-apiserver-n1', file: claim.file, message: claim.message },
    ]);

    // Another file's refusal changes nothing for it; the file going away does.
    claims([claim, { file: '/m/x.yaml', podKey: 'default/x-n1', message: 'bad' }]);
    await workers.idle();
    expect(isRunning(runtime, 'kubelet-api')).toBe(true);
    claims([]);
    await waitFor(() => !runtime.pods.has('kubelet-api'), {
      ...WAIT,
      what: 'the held pod stopped once its file is gone',
    });
    expect(config.heldPods()).toEqual([]);
  });

  it('replaces a held pod when its manifest becomes valid, never running both at once', async () => {
    const { runtime, workers, adopt, claims, add } = setup();
    claims([{ file: '/m/kube-apiserver.yaml', podKey: 'kube-system/kube-apiserver-n1', message: 'bad' }]);
    await adopt([seed(runtime, { uid: 'kubelet-api', name: 'kube-apiserver-n1', source: 'file' })]);
    await workers.idle();
    expect(stops(runtime)).toEqual([]);
    // The fixed file: its pod arrives first, the claim goes after (either order must work).
    add(staticPod('kube-apiserver-n1', 'uid-fixed'));
    claims([]);
    await waitFor(() => isRunning(runtime, 'uid-fixed'), { ...WAIT, what: 'the fixed pod running' });
    const stopHeld = runtime.journal.indexOf('stop kube-apiserver-n1 kubelet-api main');
    const startNew = runtime.journal.indexOf('createSandbox kube-apiserver-n1 uid-fixed');
    expect(stopHeld).toBeGreaterThanOrEqual(0);
    expect(startNew).toBeGreaterThan(stopHeld);
    await waitFor(() => !runtime.pods.has('kubelet-api'), { ...WAIT, what: 'the held pod removed' });
  });

  it('a fixed manifest whose claim goes first still waits for the held pod to stop', async () => {
    const { runtime, workers, adopt, claims, add } = setup();
    claims([{ file: '/m/etcd.yaml', podKey: 'kube-system/etcd-n1', message: 'bad' }]);
    await adopt([seed(runtime, { uid: 'kubelet-etcd', name: 'etcd-n1', source: 'file' })]);
    await workers.idle();
    claims([]);
    add(staticPod('etcd-n1', 'uid-fixed'));
    await waitFor(() => isRunning(runtime, 'uid-fixed'), { ...WAIT, what: 'the fixed pod running' });
    expect(runtime.journal.indexOf('createSandbox etcd-n1 uid-fixed')).toBeGreaterThan(
      runtime.journal.indexOf('stop etcd-n1 kubelet-etcd main'),
    );
  });

  it('a file that cannot be parsed may declare any pod: every static orphan is kept until it goes', async () => {
    const { runtime, workers, logs, adopt, claims, add } = setup();
    claims([{ file: '/m/broken.yaml', message: 'yaml: line 3: mapping values are not allowed here' }]);
    add(staticPod('sleeper-n1', 'uid-sleeper'));
    await adopt([
      seed(runtime, { uid: 'kubelet-etcd', name: 'etcd-n1', source: 'file' }),
      seed(runtime, { uid: 'kubelet-api', name: 'kube-apiserver-n1', source: 'file' }),
      seed(runtime, { uid: 'proxy', name: 'kube-proxy-x1', source: 'api' }),
    ]);
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
    claims([{ file: '/m/broken.yaml', podKey: 'kube-system/kube-apiserver-n1', message: 'still refused' }]);
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
    const { runtime, workers, logs, adopt } = setup();
    await adopt([
      seed(runtime, { uid: 'evil-1', name: '../../../etc', source: 'file' }),
      seed(runtime, { uid: '../../x', name: 'etcd-n1', source: 'file' }),
      seed(runtime, { uid: 'evil-3', name: 'etcd-n1', namespace: 'kube_system/..', source: 'file', bootlet: true }),
    ]);
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

describe('runtime pods of a source that has not answered', () => {
  /** The set alone: what the policy asks the workers to stop, by UID. */
  function policy(sources: SourceName[] = ['file', 'http']) {
    const { logger, lines } = memoryLogger();
    const config = new PodConfig({ sources, logger });
    const told: string[] = [];
    config.subscribe((u: PodUpdate) => told.push(`${u.op} ${u.pod.uid}`));
    const stopped: string[] = [];
    const stops: Array<{ uid: string; namespace: string; name: string; source: string | undefined }> = [];
    const adopt = async (found: RuntimePodSeed[]): Promise<void> => {
      const adopted = adoptionOf(config, found.map(runtimePodOf), {
        stop: (uid, pod) => {
          stopped.push(uid);
          stops.push({ uid, ...pod });
        },
      });
      config.feed('file').ready();
      await adopted;
    };
    return { config, told, lines, stopped, stops, adopt };
  }

  it("holds a runtime API pod back while the API server has not answered, even under a desired static pod's name", async () => {
    const { config, stopped, adopt } = policy(['file', 'api']);
    config.update('file', { op: 'ADD', pod: staticPod('web-n', 'f1') });
    await adopt([{ uid: 'a1', namespace: 'kube-system', name: 'web-n', source: 'api' }]);
    expect(config.heldPods()).toEqual([{ uid: 'a1', key: 'kube-system/web-n', source: 'api' }]);
    config.update('api', { op: 'ADD', pod: staticPod('web-n', 'a1', 'kube-system', 'api') });
    config.markSeen('api');
    expect(stopped).toEqual([]);
    expect(config.heldPods()).toEqual([]);
  });

  it('holds the runtime pods of a source that has not answered, and stops only those it no longer gives', async () => {
    const { config, told, lines, stopped, adopt } = policy();
    await adopt([
      { uid: 'old-web', namespace: 'kube-system', name: 'web-n', source: 'http' },
      { uid: 'same-db', namespace: 'kube-system', name: 'db-n', source: 'http' },
      { uid: 'gone', namespace: 'kube-system', name: 'gone-n', source: 'http' },
      { uid: 'a-file-pod', namespace: 'kube-system', name: 'a-n', source: 'file' },
      { uid: 'api-pod', namespace: 'default', name: 'x', source: 'api' },
    ]);
    // Held: only what the unanswered source made; the file source has answered (its pod has no
    // manifest: stopped), and no api source is configured (left alone).
    expect(
      config
        .heldPods()
        .map((h) => h.uid)
        .sort(),
    ).toEqual(['gone', 'old-web', 'same-db']);
    expect(lines.filter((l) => l.includes('Pods from staticPodURL keep running until it answers'))).toHaveLength(1);
    expect(stopped).toEqual(['a-file-pod']);

    const http = config.feed('http');
    http.update({ op: 'ADD', pod: staticPod('db-n', 'same-db', 'kube-system', 'http') });
    // A new version of a held pod's name: the old one is stopped before the workers are told.
    config.subscribe((u) => told.push(`then stopped: ${JSON.stringify(stopped)} at ${u.pod.uid}`));
    http.update({ op: 'ADD', pod: staticPod('web-n', 'new-web', 'kube-system', 'http') });
    expect(told).toContain('then stopped: ["a-file-pod","old-web"] at new-web');
    // The source has answered: what it no longer gives is stopped; the same UID was its worker's to adopt.
    http.ready();
    expect(stopped).toEqual(['a-file-pod', 'old-web', 'gone']);
  });

  it('hands the held runtime pod itself to be stopped once its source has answered without it', async () => {
    const { config, stops, adopt } = policy(['file', 'api']);
    await adopt([{ uid: 'gone', namespace: 'kube-system', name: 'kube-proxy-old', source: 'api' }]);
    expect(stops).toEqual([]);
    config.feed('api').ready();
    expect(stops).toEqual([{ uid: 'gone', namespace: 'kube-system', name: 'kube-proxy-old', source: 'api' }]);
  });

  it('does not hold a runtime pod whose name another source already gives: it is replaced as any stale pod', async () => {
    const { config, stopped, adopt } = policy();
    config.update('file', { op: 'ADD', pod: staticPod('web-n', 'f1') });
    await adopt([{ uid: 'old', namespace: 'kube-system', name: 'web-n', source: 'http' }]);
    expect(config.heldPods()).toEqual([]);
    expect(stopped).toEqual(['old']);
  });

  it('never holds anything for a source that has answered', async () => {
    const { config, stopped, adopt } = policy();
    config.feed('http').ready();
    await adopt([{ uid: 'old', namespace: 'kube-system', name: 'web-n', source: 'http' }]);
    expect(config.heldPods()).toEqual([]);
    expect(stopped).toEqual(['old']);
  });
});
