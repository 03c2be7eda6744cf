import { describe, expect, it } from 'vitest';
import type { StaticPod } from '../../../src/config/types.js';
import { nullLogger } from '../../../src/log/logger.js';
import { PodConfig } from '../../../src/config/pod-config/pod-config.js';
import { PodWorkers } from '../../../src/podworkers/pod-workers.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { waitFor } from '../../support/wait.js';
import { StatusManager } from '../../../src/status/status-manager.js';
import { statusObserver } from '../../../src/status/worker-events.js';
import { FakePodRuntime } from './fake-pod-runtime.js';

function staticPod(name: string, uid: string, containers = ['main']): StaticPod {
  return {
    uid,
    key: `default/${name}`,
    file: `/m/${name}.yaml`,
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid, annotations: { 'kubernetes.io/config.hash': uid } },
      spec: {
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 1,
        containers: containers.map((c) => ({ name: c, image: 'img' })),
      },
    },
  };
}

function setup() {
  const runtime = new FakePodRuntime();
  const workers = new PodWorkers({ runtime, cache: runtime.cache, logger: nullLogger, syncFrequencyMs: 60_000 });
  return { runtime, workers };
}

const running = (rt: FakePodRuntime, uid: string, name = 'main') =>
  rt.pods.get(uid)?.containers.find((c) => c.name === name && c.state === ContainerState.CONTAINER_RUNNING);

describe('PodWorkers', () => {
  it('has at most maxConcurrentStarts pods starting at once, in turn; a pod removed while it waits never starts', async () => {
    const runtime = new FakePodRuntime();
    let open!: () => void;
    runtime.gate.set('main', new Promise<void>((r) => (open = r)));
    // Pods between their sandbox and their container: what the limit bounds.
    let starting = 0;
    let most = 0;
    const createSandbox = runtime.createSandbox.bind(runtime);
    const startContainer = runtime.startContainer.bind(runtime);
    runtime.createSandbox = async (...args) => {
      most = Math.max(most, ++starting);
      return createSandbox(...args);
    };
    runtime.startContainer = async (...args) => {
      try {
        return await startContainer(...args);
      } finally {
        starting--;
      }
    };
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger: nullLogger,
      syncFrequencyMs: 60_000,
      maxConcurrentStarts: 2,
    });
    workers.start(() => false);
    for (let i = 0; i < 6; i++) workers.apply({ op: 'ADD', pod: staticPod(`p${i}`, `uid-${i}`) });
    const sandboxes = () => runtime.journal.filter((j) => j.startsWith('createSandbox'));
    await waitFor(() => sandboxes().length === 2, { timeoutMs: 5000, what: 'the first two pods starting' });
    expect(workers.snapshot().filter((w) => w.state === 'WaitingToStart')).toHaveLength(4);
    workers.apply({ op: 'REMOVE', pod: staticPod('p5', 'uid-5') });
    open();
    await waitFor(() => [0, 1, 2, 3, 4].every((i) => running(runtime, `uid-${i}`)), {
      timeoutMs: 5000,
      what: 'the five wanted pods running',
    });
    await waitFor(() => !workers.has('uid-5'), { timeoutMs: 5000, what: 'the removed pod gone' });
    expect(most).toBe(2);
    expect(sandboxes()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4'].map((n, i) => `createSandbox ${n} uid-${i}`));
  });

  it('gives a pod waiting for a start slot a Pending status at once, so every wanted pod is listed', async () => {
    const runtime = new FakePodRuntime();
    let open!: () => void;
    runtime.gate.set('main', new Promise<void>((r) => (open = r)));
    let workers!: PodWorkers;
    const status = new StatusManager({
      runtimePod: (uid) => runtime.pods.get(uid),
      pods: () => workers.snapshot(),
      pod: (uid) => workers.snapshotOf(uid),
      probes: { ready: () => undefined, started: () => undefined },
      nodeIP: '10.0.0.1',
      runtimeName: 'containerd',
      logger: nullLogger,
    });
    workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger: nullLogger,
      syncFrequencyMs: 60_000,
      maxConcurrentStarts: 1,
      observers: [statusObserver(status)],
    });
    workers.start(() => false);
    for (let i = 0; i < 3; i++) workers.apply({ op: 'ADD', pod: staticPod(`p${i}`, `uid-${i}`) });
    await waitFor(() => runtime.journal.includes('createSandbox p0 uid-0'), { timeoutMs: 5000, what: 'p0 starting' });
    await status.idle();
    // p1 and p2 wait behind p0's start: before, they had no status and /pods left them out.
    expect(
      workers
        .snapshot()
        .filter((w) => w.state === 'WaitingToStart')
        .map((w) => w.uid)
        .sort(),
    ).toEqual(['uid-1', 'uid-2']);
    expect(status.all().map((e) => [e.key, e.status.phase])).toEqual([
      ['default/p0', 'Pending'],
      ['default/p1', 'Pending'],
      ['default/p2', 'Pending'],
    ]);
    open();
    await waitFor(() => [0, 1, 2].every((i) => running(runtime, `uid-${i}`)), {
      timeoutMs: 5000,
      what: 'the three pods running',
    });
  });

  it("runs at most maxConcurrentTeardowns pods' teardown calls at once, and still stops and removes every pod", async () => {
    const runtime = new FakePodRuntime();
    let inFlight = 0;
    let most = 0;
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    const bounded =
      <A extends unknown[]>(call: (...args: A) => Promise<void>) =>
      async (...args: A): Promise<void> => {
        most = Math.max(most, ++inFlight);
        try {
          await opened;
          await call(...args);
        } finally {
          inFlight--;
        }
      };
    runtime.stopSandbox = bounded(runtime.stopSandbox.bind(runtime));
    runtime.removeSandbox = bounded(runtime.removeSandbox.bind(runtime));
    runtime.removeContainer = bounded(runtime.removeContainer.bind(runtime));
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger: nullLogger,
      syncFrequencyMs: 60_000,
      maxConcurrentTeardowns: 3,
    });
    workers.start(() => false);
    for (let i = 0; i < 8; i++) workers.apply({ op: 'ADD', pod: staticPod(`p${i}`, `uid-${i}`) });
    await waitFor(() => [...Array(8).keys()].every((i) => running(runtime, `uid-${i}`)), {
      timeoutMs: 5000,
      what: 'eight pods running',
    });
    for (let i = 0; i < 8; i++) workers.apply({ op: 'REMOVE', pod: staticPod(`p${i}`, `uid-${i}`) });
    await waitFor(() => inFlight === 3, { timeoutMs: 5000, what: 'three teardowns under way' });
    open();
    await waitFor(() => [...Array(8).keys()].every((i) => !workers.has(`uid-${i}`)), {
      timeoutMs: 5000,
      what: 'every pod removed',
    });
    expect(most).toBe(3);
    expect(runtime.pods.size).toBe(0);
  });

  it('ends a pod removed before its turn with no runtime call, and tells observers it is gone; one found at start is stopped as usual', async () => {
    const runtime = new FakePodRuntime();
    let open!: () => void;
    runtime.gate.set('main', new Promise<void>((r) => (open = r)));
    const removed: string[] = [];
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger: nullLogger,
      syncFrequencyMs: 60_000,
      maxConcurrentStarts: 1,
      observers: [{ podRemoved: (uid) => removed.push(uid) }],
    });
    // uid-found was in the runtime when it was read back (from before a restart): a waiting worker may own it.
    workers.start((uid) => uid === 'uid-found');
    workers.apply({ op: 'ADD', pod: staticPod('p0', 'uid-0') });
    workers.apply({ op: 'ADD', pod: staticPod('p1', 'uid-1') });
    workers.apply({ op: 'ADD', pod: staticPod('found', 'uid-found') });
    await waitFor(() => runtime.journal.includes('createSandbox p0 uid-0'), { timeoutMs: 5000, what: 'p0 starting' });
    workers.apply({ op: 'REMOVE', pod: staticPod('p1', 'uid-1') });
    workers.apply({ op: 'REMOVE', pod: staticPod('found', 'uid-found') });
    await waitFor(() => !workers.has('uid-1') && !workers.has('uid-found'), {
      timeoutMs: 5000,
      what: 'both removed pods gone',
    });
    expect(removed).toEqual(expect.arrayContaining(['uid-1', 'uid-found']));
    expect(runtime.reads.get('uid-1')).toBeUndefined();
    expect(runtime.journal.filter((j) => j.includes('uid-1'))).toEqual([]);
    expect(runtime.reads.get('uid-found')).toBeGreaterThan(0);
    expect(runtime.journal).toContain('cleanup uid-found');
    open();
    await waitFor(() => running(runtime, 'uid-0'), { timeoutMs: 5000, what: 'p0 running' });
  });

  it('starts nothing before the runtime has been read back, then runs desired pods', async () => {
    const { runtime, workers } = setup();
    workers.apply({ op: 'ADD', pod: staticPod('a', 'uid-a') });
    await workers.idle();
    expect(runtime.journal).toEqual([]);
    workers.start(() => false);
    await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a running' });
  });

  it('tells observers whether a sync changed the runtime after reading it', async () => {
    const runtime = new FakePodRuntime();
    const synced: Array<{ acted: boolean; running: boolean }> = [];
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger: nullLogger,
      syncFrequencyMs: 60_000,
      observers: [
        {
          podSynced: (_pod, rt, acted) =>
            synced.push({
              acted,
              running: !!rt?.containers.some((c) => c.name === 'main' && c.state === ContainerState.CONTAINER_RUNNING),
            }),
        },
      ],
    });
    workers.start(() => false);
    workers.apply({ op: 'ADD', pod: staticPod('a', 'uid-a') });
    await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a running' });
    await workers.idle();
    workers.wake('uid-a');
    await workers.idle();
    // The first sync read an empty runtime and started the pod; a later one found it running and did nothing.
    expect(synced[0]).toEqual({ acted: true, running: false });
    expect(synced.at(-1)).toEqual({ acted: false, running: true });
  });

  it('resyncs from the pod cache: no read while relists keep it newer than the last step, one per step otherwise', async () => {
    const runtime = new FakePodRuntime();
    const synced: boolean[] = [];
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger: nullLogger,
      syncFrequencyMs: 20,
      observers: [{ podSynced: (_pod, _rt, acted) => synced.push(acted) }],
    });
    workers.start(() => false);
    workers.apply({ op: 'ADD', pod: staticPod('a', 'uid-a') });
    await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a running' });
    // The PLEG relisting between steps: every resync finds a read newer than its last step.
    runtime.plegKeepsUp = true;
    await waitFor(() => synced.filter((a) => !a).length >= 3, { timeoutMs: 5000, what: 'resyncs' });
    const reads = runtime.reads.get('uid-a')!;
    const relisted = synced.length;
    await waitFor(() => synced.length >= relisted + 6, { timeoutMs: 5000, what: 'more resyncs' });
    expect(runtime.reads.get('uid-a')).toBe(reads);
    runtime.plegKeepsUp = false;
    // No relist since: each step reads its pod itself.
    const before = runtime.reads.get('uid-a')!;
    const syncs = synced.length;
    await waitFor(() => synced.length >= syncs + 5, { timeoutMs: 5000, what: 'resyncs without relists' });
    expect(runtime.reads.get('uid-a')! - before).toBeGreaterThanOrEqual(4);
    workers.shutdown();
  });

  it('stops and removes a runtime pod the adoption policy hands over', async () => {
    const { runtime, workers } = setup();
    const old = staticPod('old', 'uid-old');
    await runtime.createSandbox(old.pod, 0);
    await runtime.startContainer(
      old.pod,
      { id: runtime.pods.get('uid-old')!.sandboxes[0]!.id, attempt: 0, ip: '' },
      old.pod.spec!.containers[0]!,
      'container',
      0,
    );
    workers.start((uid) => uid === 'uid-old');
    workers.stopRuntimePod('uid-old', { namespace: 'default', name: 'old', source: undefined }, 'no manifest');
    await waitFor(() => !runtime.pods.has('uid-old'), { timeoutMs: 5000, what: 'orphan removed' });
    expect(runtime.journal.slice(-2)).toEqual(['stop old uid-old main', 'cleanup uid-old']);
  });

  it('starts a replacement only after the old version of the pod has stopped', async () => {
    const { runtime, workers } = setup();
    workers.start(() => false);
    const v1 = staticPod('web', 'uid-1');
    workers.apply({ op: 'ADD', pod: v1 });
    await waitFor(() => running(runtime, 'uid-1'), { timeoutMs: 5000, what: 'v1 running' });
    workers.apply({ op: 'UPDATE', pod: staticPod('web', 'uid-2'), previous: v1 });
    await waitFor(() => running(runtime, 'uid-2'), { timeoutMs: 5000, what: 'v2 running' });
    const stopOld = runtime.journal.indexOf('stop web uid-1 main');
    const startNew = runtime.journal.indexOf('createSandbox web uid-2');
    expect(stopOld).toBeGreaterThanOrEqual(0);
    expect(startNew).toBeGreaterThan(stopOld);
  });

  it("an API pod under a running static pod's name starts beside it: the same-name wait is among static pods only", async () => {
    const { runtime, workers } = setup();
    workers.start(() => false);
    const st = staticPod('web-n', 'uid-static');
    const api = staticPod('web-n', 'uid-api');
    api.pod.metadata.annotations['kubernetes.io/config.source'] = 'api';
    workers.apply({ op: 'ADD', pod: st });
    await waitFor(() => running(runtime, 'uid-static'), { timeoutMs: 5000, what: 'the static pod running' });
    workers.apply({ op: 'ADD', pod: api });
    await waitFor(() => running(runtime, 'uid-api'), { timeoutMs: 5000, what: 'the API pod running beside it' });
    expect(running(runtime, 'uid-static')).toBeDefined();
  });

  it('an orphan with the same name as a desired pod stops before the desired pod starts', async () => {
    const { runtime, workers } = setup();
    const stale = staticPod('etcd', 'uid-stale');
    const sb = await runtime.createSandbox(stale.pod, 0);
    await runtime.startContainer(stale.pod, sb, stale.pod.spec!.containers[0]!, 'container', 0);
    workers.apply({ op: 'ADD', pod: staticPod('etcd', 'uid-new') });
    workers.stopRuntimePod('uid-stale', { namespace: 'default', name: 'etcd', source: undefined }, 'no manifest');
    workers.start((uid) => uid === 'uid-stale');
    await waitFor(() => running(runtime, 'uid-new'), { timeoutMs: 5000, what: 'new etcd running' });
    expect(runtime.journal.indexOf('stop etcd uid-stale main')).toBeLessThan(
      runtime.journal.indexOf('createSandbox etcd uid-new'),
    );
  });

  it('a slow container start in one pod does not hold up another pod', async () => {
    const { runtime, workers } = setup();
    let release!: () => void;
    runtime.gate.set('slow', new Promise<void>((r) => (release = r)));
    workers.start(() => false);
    workers.apply({ op: 'ADD', pod: staticPod('a', 'uid-a', ['slow']) });
    workers.apply({ op: 'ADD', pod: staticPod('b', 'uid-b', ['fast']) });
    await waitFor(() => running(runtime, 'uid-b', 'fast'), { timeoutMs: 5000, what: 'b running while a is stuck' });
    expect(running(runtime, 'uid-a', 'slow')).toBeUndefined();
    release();
    await waitFor(() => running(runtime, 'uid-a', 'slow'), { timeoutMs: 5000, what: 'a running once released' });
  });

  it('starts no more containers of a pod once it is to be removed, and stops the ones it started', async () => {
    const { runtime, workers } = setup();
    let release!: () => void;
    runtime.gate.set('first', new Promise<void>((r) => (release = r)));
    workers.start(() => false);
    const pod = staticPod('a', 'uid-a', ['first', 'second', 'third']);
    workers.apply({ op: 'ADD', pod });
    await waitFor(() => runtime.journal.some((l) => l.startsWith('createSandbox a')), {
      timeoutMs: 5000,
      what: 'a sandbox',
    });
    workers.apply({ op: 'REMOVE', pod });
    release();
    await waitFor(() => !workers.has('uid-a'), { timeoutMs: 5000, what: 'a removed' });
    expect(runtime.journal.filter((l) => l.startsWith('start a'))).toEqual(['start a uid-a first']);
    expect(runtime.journal).toContain('stop a uid-a first');
  });

  it('acts on a restart asked through the API before the pod had a worker (an agent back up), once', async () => {
    const { runtime, workers } = setup();
    const a = staticPod('a', 'uid-a');
    const sb = await runtime.createSandbox(a.pod, 0);
    await runtime.startContainer(a.pod, sb, a.pod.spec!.containers[0]!, 'container', 0);
    const before = running(runtime, 'uid-a')!;
    // The mirror is read before the runtime is: the request comes first.
    workers.restartContainers('uid-a', 'v2');
    workers.start((uid) => uid === 'uid-a');
    workers.apply({ op: 'ADD', pod: a });
    const after = await waitFor(() => running(runtime, 'uid-a')?.id !== before.id && running(runtime, 'uid-a'), {
      timeoutMs: 5000,
      what: 'the container restarted for v2',
    });
    expect([after.meta.restartedAt, after.meta.restartCount]).toEqual(['v2', 1]);
    await workers.idle();
    workers.wake('uid-a');
    await workers.idle();
    expect(running(runtime, 'uid-a')?.id).toBe(after.id);
  });

  it('restarts a dead container when woken by a runtime event', async () => {
    const { runtime, workers } = setup();
    workers.start(() => false);
    workers.apply({ op: 'ADD', pod: staticPod('a', 'uid-a') });
    await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a running' });
    runtime.kill('uid-a', 'main', 1);
    workers.wake('uid-a');
    const again = await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a restarted' });
    expect(again.meta.restartCount).toBe(1);
  });

  it('removes a pod whose manifest went away', async () => {
    const { runtime, workers } = setup();
    workers.start(() => false);
    const a = staticPod('a', 'uid-a');
    workers.apply({ op: 'ADD', pod: a });
    await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a running' });
    workers.apply({ op: 'REMOVE', pod: a });
    await waitFor(() => !runtime.pods.has('uid-a') && !workers.has('uid-a'), { timeoutMs: 5000, what: 'a gone' });
  });

  it('runs the preStop hook before stopping a container, within the grace period, even if it fails', async () => {
    const { runtime, workers } = setup();
    workers.start(() => false);
    const p = staticPod('a', 'uid-a', ['main', 'side']);
    p.pod.spec!.terminationGracePeriodSeconds = 20;
    p.pod.spec!.containers[0]!.lifecycle = { preStop: { exec: { command: ['sh', '-c', 'drain'] } } };
    p.pod.spec!.containers[1]!.lifecycle = { preStop: { exec: { command: ['false'] } } };
    workers.apply({ op: 'ADD', pod: p });
    await waitFor(() => running(runtime, 'uid-a', 'side'), { timeoutMs: 5000, what: 'a running' });
    workers.apply({ op: 'REMOVE', pod: p });
    await waitFor(() => !workers.has('uid-a'), { timeoutMs: 5000, what: 'a gone' });
    const hookMain = runtime.journal.findIndex(
      (l) => l.startsWith('hook main') && l.includes('drain') && l.endsWith('timeout=20'),
    );
    const stopMain = runtime.journal.indexOf('stop a uid-a main');
    expect(hookMain).toBeGreaterThanOrEqual(0);
    expect(stopMain).toBeGreaterThan(hookMain);
    expect(runtime.journal).toContain('stop a uid-a side');
    expect(runtime.graces.every((g) => g >= 2 && g <= 20)).toBe(true);
  });

  it('kills a container whose liveness probe failed and restarts it under Always: the result is an input of the sync', async () => {
    const runtime = new FakePodRuntime();
    const failed = new Set<string>();
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger: nullLogger,
      syncFrequencyMs: 60_000,
      probes: { failedProbe: (_u, _n, id) => (failed.has(id) ? 'liveness' : undefined) },
    });
    workers.start(() => false);
    const p = staticPod('a', 'uid-a');
    p.pod.spec!.containers[0]!.livenessProbe = { exec: { command: ['true'] }, terminationGracePeriodSeconds: 7 };
    workers.apply({ op: 'ADD', pod: p });
    const first = await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a running' });
    failed.add(first.id);
    workers.wake('uid-a');
    const second = await waitFor(() => running(runtime, 'uid-a')?.id !== first.id && running(runtime, 'uid-a'), {
      timeoutMs: 5000,
      what: 'a restarted',
    });
    expect(second.meta.restartCount).toBe(1);
    expect(runtime.graces).toContain(7);
  });

  it('shows ErrImagePull after a failed pull, then waits out the pull back-off as ImagePullBackOff without pulling', async () => {
    const { runtime, workers } = setup();
    runtime.missingImages.add('img');
    workers.start(() => false);
    workers.apply({ op: 'ADD', pod: staticPod('a', 'uid-a') });
    const waitingOf = () =>
      workers
        .snapshot()
        .find((w) => w.uid === 'uid-a')
        ?.lastSync?.waiting.get('main');
    await waitFor(() => waitingOf()?.reason === 'ErrImagePull', { timeoutMs: 5000, what: 'ErrImagePull' });
    expect(runtime.pulls).toEqual(['img']);
    workers.wake('uid-a');
    await waitFor(() => waitingOf()?.reason === 'ImagePullBackOff', { timeoutMs: 5000, what: 'ImagePullBackOff' });
    expect(waitingOf()?.message).toBe(
      'Back-off pulling image "img": ErrImagePull: failed to pull image "img": not found',
    );
    await workers.idle();
    expect(runtime.pulls).toEqual(['img']);
  });

  it("holds a container whose image volume's image cannot be pulled with that image's ImagePullBackOff", async () => {
    const { runtime, workers } = setup();
    runtime.missingImages.add('models:1');
    const p = staticPod('a', 'uid-a');
    p.pod.spec!.volumes = [{ name: 'models', image: { reference: 'models:1', pullPolicy: 'IfNotPresent' } }];
    p.pod.spec!.containers[0]!.volumeMounts = [{ name: 'models', mountPath: '/models' }];
    workers.start(() => false);
    workers.apply({ op: 'ADD', pod: p });
    const waitingOf = () =>
      workers
        .snapshot()
        .find((w) => w.uid === 'uid-a')
        ?.lastSync?.waiting.get('main');
    await waitFor(() => waitingOf()?.reason === 'ErrImagePull', { timeoutMs: 5000, what: 'ErrImagePull' });
    expect(waitingOf()?.message).toBe('failed to pull image "models:1": not found');
    // The volume's image failed first: the container's own was never asked for.
    expect(runtime.pulls).toEqual(['models:1']);
    workers.wake('uid-a');
    await waitFor(() => waitingOf()?.reason === 'ImagePullBackOff', { timeoutMs: 5000, what: 'ImagePullBackOff' });
    expect(waitingOf()?.message).toBe(
      'Back-off pulling image "models:1": ErrImagePull: failed to pull image "models:1": not found',
    );
    await workers.idle();
    expect(runtime.pulls).toEqual(['models:1']);
  });
});

// A worker reads its pod from the one desired set while the set holds its UID, and keeps the pod
// it was last given once the set no longer does (it is being stopped with that pod's grace period).
describe('PodWorkers with the desired pod set', () => {
  it('reads each pod from the set, and keeps the last one once it has left the set', async () => {
    const runtime = new FakePodRuntime();
    const config = new PodConfig({ sources: ['file'], logger: nullLogger });
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger: nullLogger,
      syncFrequencyMs: 60_000,
      desired: config,
    });
    config.subscribe((u) => workers.apply(u));
    workers.start(() => false);
    const feed = config.feed('file');
    const v1 = staticPod('a', 'pinned');
    feed.update({ op: 'ADD', pod: v1 });
    expect(workers.snapshot()[0]?.pod).toBe(v1.pod);
    // A pinned UID edited in place: same UID, new content, read from the set.
    const v2: StaticPod = {
      ...v1,
      pod: { ...v1.pod, spec: { ...v1.pod.spec!, containers: [{ name: 'main', image: 'img2' }] } },
    };
    feed.update({ op: 'UPDATE', pod: v2, previous: v1 });
    expect(config.podByUid('pinned')).toBe(v2);
    expect(workers.snapshot()[0]?.pod).toBe(v2.pod);
    await waitFor(() => runtime.journal.some((l) => l.startsWith('start a')), { timeoutMs: 5000, what: 'a started' });
    feed.update({ op: 'REMOVE', pod: v2 });
    expect(config.podByUid('pinned')).toBeUndefined();
    expect(workers.snapshot().find((w) => w.uid === 'pinned')?.pod).toBe(v2.pod);
    await waitFor(() => !workers.has('pinned'), { timeoutMs: 5000, what: 'a stopped' });
  });
});
