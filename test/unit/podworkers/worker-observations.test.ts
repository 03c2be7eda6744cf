// What pod workers tell observers for the kubelet's metrics: step durations by operation type,
// container start attempts and failures, and a pod that comes back with the same UID.
import { describe, expect, it } from 'vitest';
import type { StaticPod } from '../../../src/config/types.js';
import { nullLogger } from '../../../src/log/logger.js';
import type { PodWorkerObserver } from '../../../src/podworkers/observer.js';
import { ContainerStartError } from '../../../src/kuberuntime/pod-runtime.js';
import { PodWorkers } from '../../../src/podworkers/pod-workers.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { waitFor } from '../../support/wait.js';
import { FakePodRuntime } from './fake-pod-runtime.js';

function staticPod(name: string, uid: string, image = 'img'): StaticPod {
  return {
    uid,
    key: `default/${name}`,
    file: `/m/${name}.yaml`,
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid, annotations: { 'kubernetes.io/config.hash': uid } },
      spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image }] },
    },
  };
}

const running = (rt: FakePodRuntime, uid: string) =>
  rt.pods.get(uid)?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING) ?? false;

function setup() {
  const runtime = new FakePodRuntime();
  const seen: string[] = [];
  const observer: PodWorkerObserver = {
    podWorkerStep: (uid, op) => seen.push(`step ${uid} ${op}`),
    containerStartAttempt: (uid, type) => seen.push(`attempt ${uid} ${type}`),
    containerStartFailed: (uid, type, reason) => seen.push(`failed ${uid} ${type} ${reason}`),
    podRestarted: (uid) => seen.push(`restarted ${uid}`),
  };
  const workers = new PodWorkers({
    runtime,
    cache: runtime.cache,
    logger: nullLogger,
    syncFrequencyMs: 60_000,
    observers: [observer],
  });
  workers.start(() => false);
  return { runtime, workers, seen };
}

describe('pod worker observations', () => {
  it('labels steps create, sync, update, kill and terminated as the kubelet does', async () => {
    const { runtime, workers, seen } = setup();
    const a = staticPod('a', 'uid-a');
    workers.apply({ op: 'ADD', pod: a });
    await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a running' });
    await workers.idle();
    workers.wake('uid-a');
    await workers.idle();
    // A pinned UID edited in place: the same worker syncs a new spec.
    workers.apply({ op: 'UPDATE', pod: staticPod('a', 'uid-a', 'img2'), previous: a });
    await workers.idle();
    workers.apply({ op: 'REMOVE', pod: a });
    await waitFor(() => !workers.has('uid-a'), { timeoutMs: 5000, what: 'a gone' });
    const steps = seen.filter((s) => s.startsWith('step')).map((s) => s.split(' ')[2]);
    expect(steps[0]).toBe('create');
    expect(steps).toContain('sync');
    expect(steps).toContain('update');
    expect(steps.slice(-2)).toEqual(['kill', 'terminated']);
    expect(seen).toContain('attempt uid-a container');
  });

  it('reports a failed container start with the waiting reason it leaves', async () => {
    const { runtime, workers, seen } = setup();
    runtime.gate.set('main', Promise.reject(new ContainerStartError('main', 'ErrImagePull', 'no such image', 'pull')));
    workers.apply({ op: 'ADD', pod: staticPod('b', 'uid-b') });
    await waitFor(() => seen.includes('failed uid-b container ErrImagePull'), {
      timeoutMs: 5000,
      what: 'failure reported',
    });
    expect(seen.indexOf('attempt uid-b container')).toBeLessThan(seen.indexOf('failed uid-b container ErrImagePull'));
  });

  it('starts a pod added back with the same UID while it was stopping, once it has stopped, and counts the restart', async () => {
    const { runtime, workers, seen } = setup();
    const a = staticPod('a', 'uid-a');
    workers.apply({ op: 'ADD', pod: a });
    await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a running' });
    await workers.idle();
    // The manifest is moved away and back (same content, same UID) before the pod has stopped.
    workers.apply({ op: 'REMOVE', pod: a });
    workers.apply({ op: 'ADD', pod: a });
    await waitFor(() => seen.includes('restarted uid-a'), { timeoutMs: 5000, what: 'restart counted' });
    await waitFor(() => running(runtime, 'uid-a'), { timeoutMs: 5000, what: 'a running again' });
    expect(runtime.journal.filter((j) => j.startsWith('createSandbox a')).length).toBe(2);
  });
});

describe('warnings of a start', () => {
  it('become Warning events on the pod, before Created', async () => {
    const runtime = new FakePodRuntime();
    const events: string[] = [];
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger: nullLogger,
      syncFrequencyMs: 60_000,
      observers: [{ podEvent: (e) => events.push(`${e.type} ${e.reason} ${e.container ?? '-'} ${e.message}`) }],
    });
    workers.start(() => false);
    const message =
      'Keys [a=b] from the EnvFrom configMap default/cfg were skipped since they are considered invalid environment variable names.';
    runtime.startWarnings.set('main', [{ reason: 'InvalidEnvironmentVariableNames', message }]);
    workers.apply({ op: 'ADD', pod: staticPod('warned', 'uid-warned') });
    await waitFor(() => running(runtime, 'uid-warned') && events.some((e) => e.startsWith('Normal Started')), {
      timeoutMs: 5_000,
      what: 'started',
    });
    const warned = events.indexOf(`Warning InvalidEnvironmentVariableNames - ${message}`);
    expect(warned).toBeGreaterThanOrEqual(0);
    expect(warned).toBeLessThan(events.findIndex((e) => e.startsWith('Normal Created')));
    workers.shutdown();
  });
});
