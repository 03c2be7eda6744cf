// Pods stopped for the node's shutdown go through the workers' ordinary termination, with the
// shutdown's grace, keep what exited, start nothing meanwhile, and come back on a cancel.
import { describe, expect, it } from 'vitest';
import type { StaticPod } from '../../../src/config/types.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { nullLogger } from '../../../src/log/logger.js';
import { PodWorkers } from '../../../src/podworkers/pod-workers.js';
import type { TerminationRequest } from '../../../src/podworkers/termination-request.js';
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
      spec: {
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        containers: [{ name: 'main', image: 'img' }],
      },
    },
  };
}

const STOP: TerminationRequest = {
  reason: 'node-shutdown',
  graceSeconds: 7,
  status: { reason: 'Terminated', message: 'Pod was terminated in response to imminent node shutdown.' },
};
const runningIds = (rt: FakePodRuntime, uid: string) =>
  (rt.pods.get(uid)?.containers ?? []).filter((c) => c.state === ContainerState.CONTAINER_RUNNING).map((c) => c.id);

/** Workers on a fake runtime with pod `a` running. */
async function started() {
  const runtime = new FakePodRuntime();
  const workers = new PodWorkers({ runtime, cache: runtime.cache, logger: nullLogger, syncFrequencyMs: 60_000 });
  workers.start(() => false);
  const a = staticPod('a', 'uid-a');
  workers.apply({ op: 'ADD', pod: a });
  await waitFor(() => runningIds(runtime, 'uid-a').length === 1, { timeoutMs: 5000, what: 'a running' });
  return { runtime, workers, a };
}

describe('PodWorkers.stop for the node shutdown', () => {
  it('stops the pod with the given grace and keeps its exited container and its worker', async () => {
    const { runtime, workers, a } = await started();
    await workers.stop(a.uid, STOP);
    expect(runtime.graces).toEqual([7]);
    await workers.idle();
    const snap = workers.snapshot().find((s) => s.uid === 'uid-a')!;
    expect(snap.state).toBe('Terminated');
    expect(snap.termination).toEqual(STOP);
    expect(runtime.pods.get('uid-a')?.containers.map((c) => c.state)).toEqual([ContainerState.CONTAINER_EXITED]);
    expect(runtime.journal.some((l) => l.startsWith('remove'))).toBe(false);
  });

  it('starts no new pod while the node shuts down; a cancel starts the stopped pod anew and the new one', async () => {
    const { runtime, workers, a } = await started();
    const oldId = runningIds(runtime, 'uid-a')[0];
    await workers.stop(a.uid, STOP);
    workers.apply({ op: 'ADD', pod: staticPod('b', 'uid-b') });
    await workers.idle();
    expect(runtime.pods.get('uid-b')).toBeUndefined();
    workers.restoreAfterShutdown();
    await waitFor(() => runningIds(runtime, 'uid-a').length === 1 && runningIds(runtime, 'uid-b').length === 1, {
      timeoutMs: 5000,
      what: 'a and b running',
    });
    expect(runningIds(runtime, 'uid-a')[0]).not.toBe(oldId);
    expect(workers.snapshot().every((s) => s.termination === undefined)).toBe(true);
  });

  it('does not bring back a pod whose manifest was removed during the shutdown', async () => {
    const { runtime, workers, a } = await started();
    await workers.stop(a.uid, STOP);
    workers.apply({ op: 'REMOVE', pod: a });
    workers.restoreAfterShutdown();
    await waitFor(() => !workers.has('uid-a'), { timeoutMs: 5000, what: 'a gone' });
    expect(runtime.pods.get('uid-a')?.containers ?? []).toEqual([]);
  });
});

describe('PodWorkers.whenStopped', () => {
  it('resolves once a removed pod has stopped, at once for a pod with no worker', async () => {
    const { runtime, workers, a } = await started();
    await workers.whenStopped('uid-none');
    let stopped = false;
    const waiting = workers.whenStopped('uid-a').then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    workers.apply({ op: 'REMOVE', pod: a });
    await waiting;
    expect(runningIds(runtime, 'uid-a')).toEqual([]);
    expect(runtime.graces).toEqual([30]);
  });
});
