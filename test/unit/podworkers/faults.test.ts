// A runtime that fails (restarting, deadlines, "device or resource busy") never takes a pod worker
// down: every state retries with back-off and converges once the runtime answers again. An error
// escaping a worker would be an unhandled rejection, which fails this test file.
import { describe, expect, it } from 'vitest';
import type { StaticPod } from '../../../src/config/types.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { PodWorkers } from '../../../src/podworkers/pod-workers.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { waitFor } from '../../support/wait.js';
import { FakePodRuntime } from './fake-pod-runtime.js';

function staticPod(name: string, uid: string): StaticPod {
  return {
    uid,
    key: `default/${name}`,
    file: `/m/${name}.yaml`,
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid, annotations: { 'kubernetes.io/config.hash': uid } },
      spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'img' }] },
    },
  };
}

const WAIT = { timeoutMs: 20_000, intervalMs: 20 };

async function runningPod() {
  const runtime = new FakePodRuntime();
  const { logger, lines } = memoryLogger(2);
  const workers = new PodWorkers({ runtime, cache: runtime.cache, logger, syncFrequencyMs: 60_000 });
  workers.start(() => false);
  const pod = staticPod('a', 'uid-a');
  workers.apply({ op: 'ADD', pod });
  await waitFor(() => runtime.pods.get('uid-a')?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING), {
    ...WAIT,
    what: 'a running',
  });
  await workers.idle();
  return { runtime, workers, lines, pod };
}

describe('pod workers under runtime faults', () => {
  it('removes a pod whose cleanup fails at first ("can\'t be removed", EBUSY), logging the reason once', async () => {
    const { runtime, workers, lines, pod } = await runningPod();
    const starting = new Error(
      'failed to set removing state for container "c1": container is in starting state, can\'t be removed',
    );
    runtime.faults.set('removeContainer', [starting, starting]);
    runtime.faults.set('cleanupPod', [new Error('EBUSY: resource busy or locked')]);
    workers.apply({ op: 'REMOVE', pod });
    await waitFor(() => !workers.has('uid-a') && !runtime.pods.has('uid-a'), { ...WAIT, what: 'pod removed' });
    expect(runtime.faults.get('removeContainer')).toEqual([]);
    expect(runtime.faults.get('cleanupPod')).toEqual([]);
    const failed = lines.filter((l) => l.includes('Pod worker step failed'));
    expect(failed.some((l) => l.includes("can't be removed") && l.includes('"pod":"default/a"'))).toBe(true);
    expect(
      lines.filter((l) => l.includes('Pod worker step failed, will retry') && l.includes("can't be removed")),
    ).toHaveLength(1);
  });

  it('keeps terminating while the runtime cannot be read, and finishes once it can', async () => {
    const { runtime, workers, pod } = await runningPod();
    const down = new Error('14 UNAVAILABLE: connection refused');
    runtime.faults.set('getPod', [down, down, down]);
    workers.apply({ op: 'REMOVE', pod });
    await waitFor(() => !workers.has('uid-a'), { ...WAIT, what: 'pod removed' });
    expect(runtime.journal).toContain('stop a uid-a main');
    expect(runtime.pods.has('uid-a')).toBe(false);
  });

  it('goes back to stopping when a container runs again before it could be removed', async () => {
    const { runtime, workers, pod } = await runningPod();
    runtime.faults.set('removeContainer', [new Error('container is running')]);
    workers.apply({ op: 'REMOVE', pod });
    // Between the failed removal and the retry, something starts the container again.
    await waitFor(() => runtime.journal.some((l) => l.startsWith('fault removeContainer')), {
      ...WAIT,
      what: 'removal failed',
    });
    const c = runtime.pods.get('uid-a')!.containers[0]!;
    c.state = ContainerState.CONTAINER_RUNNING;
    await waitFor(() => !workers.has('uid-a'), { ...WAIT, what: 'pod removed' });
    expect(runtime.journal.filter((l) => l === 'stop a uid-a main')).toHaveLength(2);
  });

  it('starts the edited pod once its predecessor has stopped, while the runtime still refuses to remove the old one', async () => {
    // containerd keeps a container whose start was cancelled (the agent killed mid-StartContainer)
    // and then refuses to remove it: "cannot delete running task" (containerd/containerd#11037).
    // Once a 120 s soak of SIGKILLs left the new pod of that name waiting for ever.
    const { runtime, workers, pod } = await runningPod();
    const stuck = new Error(
      'CRI RemoveContainer failed: failed to delete containerd container "c1": cannot delete running task c1: failed precondition',
    );
    runtime.faults.set(
      'removeContainer',
      Array.from({ length: 1000 }, () => stuck),
    );
    workers.apply({ op: 'UPDATE', pod: staticPod('a', 'uid-a2'), previous: pod });
    await waitFor(
      () => runtime.pods.get('uid-a2')?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING),
      { ...WAIT, what: 'the edited pod running' },
    );
    // The old one is stopped, and still being removed (with back-off), not forgotten.
    const old = runtime.pods.get('uid-a')!;
    expect(old.containers.every((c) => c.state !== ContainerState.CONTAINER_RUNNING)).toBe(true);
    expect(workers.has('uid-a')).toBe(true);
    expect(runtime.journal.indexOf('stop a uid-a main')).toBeLessThan(
      runtime.journal.indexOf('createSandbox a uid-a2'),
    );
    runtime.faults.set('removeContainer', []);
    workers.wake('uid-a');
    await waitFor(() => !workers.has('uid-a') && !runtime.pods.has('uid-a'), {
      ...WAIT,
      what: 'the old pod removed once the runtime lets it go',
    });
  });
});

describe('a sandbox that cannot be made', () => {
  it("is a Warning FailedCreatePodSandBox in the kubelet's words, retried (said once), and the pod starts once it can", async () => {
    const runtime = new FakePodRuntime();
    const { logger, lines } = memoryLogger(2);
    const events: string[] = [];
    const workers = new PodWorkers({
      runtime,
      cache: runtime.cache,
      logger,
      syncFrequencyMs: 60_000,
      observers: [{ podEvent: (e) => void events.push(`${e.type} ${e.reason} ${e.message}`) }],
    });
    workers.start(() => false);
    const notFound = new Error('runtimeclass.node.k8s.io "gvisor" not found');
    runtime.faults.set('createSandbox', [notFound, notFound]);
    workers.apply({ op: 'ADD', pod: staticPod('a', 'uid-a') });
    await waitFor(() => events.some((e) => e.startsWith('Warning FailedCreatePodSandBox')), {
      ...WAIT,
      what: 'the event',
    });
    expect(events).toContain(
      'Warning FailedCreatePodSandBox Failed to create pod sandbox: runtimeclass.node.k8s.io "gvisor" not found',
    );
    await waitFor(
      () => runtime.pods.get('uid-a')?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING),
      {
        ...WAIT,
        timeoutMs: 45_000,
        what: 'a running after the retries (10-15 s each)',
      },
    );
    await workers.idle();
    expect(lines.filter((l) => l.includes('"msg":"Error syncing pod, will retry"'))).toHaveLength(1);
    expect(
      lines.filter((l) => l.includes('"msg":"Error syncing pod again, will retry"') && l.includes('"times":2')),
    ).toHaveLength(1);
  });
});
