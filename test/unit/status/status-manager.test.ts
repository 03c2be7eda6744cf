import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, memoryLogger } from '../../../src/log/logger.js';
import { PodSandboxState } from '../../../src/cri/cri-types.js';
import type { PodWorkerSnapshot } from '../../../src/podworkers/snapshot.js';
import type { RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { StatusManager, type PodWorkerView } from '../../../src/status/status-manager.js';
import { ctr, exited, probes, runtimePod, sandbox, staticPod, T0, UID } from './fixtures.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function worker(o: Partial<PodWorkerView> = {}): PodWorkerView {
  return { uid: UID, key: 'default/web-node1', state: 'Syncing', pod: staticPod(), ...o };
}

function manager(pods: () => PodWorkerView[], runtimePod: (uid: string) => RuntimePod | undefined): StatusManager {
  return new StatusManager({
    runtimePod,
    pods,
    probes: probes(),
    nodeIP: '10.0.0.11',
    runtimeName: 'containerd',
    logger,
    now: () => new Date(T0 + 60_000),
  });
}

describe('StatusManager', () => {
  it('accepts the pod workers snapshot as its pod source', () => {
    const snap: PodWorkerSnapshot[] = [];
    const views: readonly PodWorkerView[] = snap;
    expect(views).toEqual([]);
  });

  it('computes a status in the background and tells listeners', async () => {
    const m = manager(
      () => [worker()],
      () => runtimePod([sandbox()], [ctr('c1', 'app')]),
    );
    const seen: string[] = [];
    m.onChange((uid, e) => seen.push(`${uid}:${e?.status.phase}`));
    m.update(UID);
    expect(m.get(UID)).toBeUndefined(); // not computed synchronously: the caller never waits
    await m.idle();
    expect(m.get(UID)?.status.phase).toBe('Running');
    expect(m.all().map((e) => e.key)).toEqual(['default/web-node1']);
    expect(seen).toEqual([`${UID}:Running`]);
  });

  it('folds a burst of requests into one computation', async () => {
    let calls = 0;
    const m = manager(
      () => [worker()],
      () => {
        calls++;
        return runtimePod([sandbox()], [ctr('c1', 'app')]);
      },
    );
    for (let i = 0; i < 12; i++) m.update(UID);
    await m.idle();
    expect(calls).toBe(1);
  });

  it('notifies only when the status changed', async () => {
    const m = manager(
      () => [worker()],
      () => runtimePod([sandbox()], [ctr('c1', 'app')]),
    );
    let n = 0;
    m.onChange(() => n++);
    m.update(UID);
    await m.idle();
    m.update(UID);
    await m.idle();
    expect(n).toBe(1);
  });

  it('keeps the object of a status that did not change, and gives a new one when it changes', async () => {
    let containers = [ctr('c1', 'app')];
    const m = manager(
      () => [worker()],
      () => runtimePod([sandbox()], containers),
    );
    m.update(UID);
    await m.idle();
    const first = m.get(UID)!.status;
    m.update(UID);
    await m.idle();
    // The API side's status syncs tell "nothing new" by this identity.
    expect(m.get(UID)!.status).toBe(first);
    containers = [exited('c1', 'app', 1)];
    m.update(UID);
    await m.idle();
    expect(m.get(UID)!.status).not.toBe(first);
    expect(m.get(UID)!.status).not.toEqual(first);
  });

  it('forgets a pod whose worker is gone, and says so', async () => {
    let pods = [worker()];
    const m = manager(
      () => pods,
      () => undefined,
    );
    const events: Array<string | undefined> = [];
    m.onChange((_uid, e) => events.push(e?.status.phase));
    m.update(UID);
    await m.idle();
    pods = [];
    m.updateAll();
    await m.idle();
    expect(m.get(UID)).toBeUndefined();
    expect(events).toEqual(['Pending', undefined]);
  });

  it('records when the pod began terminating', async () => {
    let state: PodWorkerView['state'] = 'Syncing';
    const m = manager(
      () => [worker({ state })],
      () => runtimePod([sandbox()], [exited('c1', 'app', 0)]),
    );
    m.update(UID);
    await m.idle();
    expect(m.get(UID)?.terminatingSince).toBeUndefined();
    state = 'Terminating';
    m.update(UID);
    await m.idle();
    expect(m.get(UID)?.terminatingSince).toEqual(new Date(T0 + 60_000));
  });

  it('joins an exited container’s termination message to the runtime’s, reading it once', async () => {
    let reads = 0;
    const m = new StatusManager({
      runtimePod: () => runtimePod([sandbox()], [exited('c1', 'app', 1, { message: 'runtime says' })]),
      pods: () => [worker({ pod: staticPod({ restartPolicy: 'Never' }) })],
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      readTerminationMessage: async () => {
        reads++;
        return 'app says';
      },
    });
    m.update(UID);
    await m.idle();
    m.update(UID);
    await m.idle();
    expect(m.get(UID)?.status.containerStatuses?.[0]?.state?.terminated?.message).toBe('runtime says: app says');
    expect(reads).toBe(1);
  });
  it('recomputes once more right after a computation that a change arrived during, and sees the change', async () => {
    const gate = deferred<string>();
    let reads = 0;
    let message = 'first';
    let computations = 0;
    const m = new StatusManager({
      runtimePod: () => {
        computations++;
        return runtimePod([sandbox()], [exited('c1', 'app', 1, { message })]);
      },
      pods: () => [worker({ pod: staticPod({ restartPolicy: 'Never' }) })],
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      readTerminationMessage: () => (++reads === 1 ? gate.promise : Promise.resolve('')),
    });
    m.update(UID);
    await vi.waitFor(() => expect(reads).toBe(1)); // the first computation is under way, held at its read
    message = 'second';
    m.update(UID);
    m.update(UID);
    gate.resolve('');
    await m.idle();
    // One more computation for both requests, not two; it saw the change.
    expect(computations).toBe(2);
    expect(m.get(UID)?.status.containerStatuses?.[0]?.state?.terminated?.message).toBe('second');
  });

  it('keeps the last status when a computation fails, and says so', async () => {
    let fail = false;
    const { logger: memLogger, lines } = memoryLogger(0);
    const m = new StatusManager({
      runtimePod: () => {
        if (fail) throw new Error('cache broken');
        return runtimePod([sandbox()], [ctr('c1', 'app')]);
      },
      pods: () => [worker()],
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger: memLogger,
    });
    m.update(UID);
    await m.idle();
    fail = true;
    m.update(UID);
    await m.idle();
    expect(m.get(UID)?.status.phase).toBe('Running');
    expect(
      lines.filter(
        (l) => l.includes('Failed to compute pod status, keeping the last one') && l.includes('cache broken'),
      ),
    ).toHaveLength(1);
  });

  describe('with a settle time', () => {
    afterEach(() => vi.useRealTimers());

    it('waits for the end of a burst and computes once', async () => {
      vi.useFakeTimers();
      let calls = 0;
      const m = new StatusManager({
        runtimePod: () => {
          calls++;
          return runtimePod([sandbox()], [ctr('c1', 'app')]);
        },
        pods: () => [worker()],
        probes: probes(),
        nodeIP: '10.0.0.11',
        runtimeName: 'containerd',
        logger,
        settleMs: 100,
      });
      m.update(UID);
      await vi.advanceTimersByTimeAsync(60);
      m.update(UID);
      expect(calls).toBe(0);
      await vi.advanceTimersByTimeAsync(60);
      await m.idle();
      expect(calls).toBe(1);
      expect(m.get(UID)?.status.phase).toBe('Running');
    });
  });
  it('records a removed pod’s final status from its stopped containers and keeps it once they are gone', async () => {
    let rt: RuntimePod | undefined = runtimePod(
      [sandbox('s1', { state: PodSandboxState.SANDBOX_NOTREADY })],
      [exited('c1', 'app', 0)],
    );
    const m = new StatusManager({
      runtimePod: () => rt,
      pods: () => [worker({ state: 'Terminated', removing: true })],
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      now: () => new Date(T0 + 60_000),
    });
    await m.recordFinal(worker({ state: 'Terminated', removing: true }));
    expect(m.get(UID)?.status.phase).toBe('Succeeded');
    expect(m.get(UID)?.status.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
    // The clean-up removed everything: a later recomputation reads nothing and must not say otherwise.
    rt = runtimePod([], []);
    m.updateAll();
    await m.idle();
    expect(m.get(UID)?.status.phase).toBe('Succeeded');
    expect(m.get(UID)?.status.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
  });

  it('keeps a final status after the worker ended while someone holds it, and forgets it once all have let go', async () => {
    let pods: PodWorkerView[] = [worker({ state: 'Terminated', removing: true })];
    const m = new StatusManager({
      runtimePod: () =>
        runtimePod([sandbox('s1', { state: PodSandboxState.SANDBOX_NOTREADY })], [exited('c1', 'app', 1)]),
      pods: () => pods,
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      now: () => new Date(T0 + 60_000),
    });
    m.hold(UID, 'apiserver');
    m.hold(UID, 'admission');
    await m.recordFinal(pods[0]!);
    pods = [];
    m.updateAll();
    m.update(UID);
    await m.idle();
    expect(m.get(UID)?.status.phase).toBe('Failed');
    m.release(UID, 'apiserver');
    expect(m.get(UID)?.status.phase).toBe('Failed');
    m.release(UID, 'admission');
    expect(m.get(UID)).toBeUndefined();
  });
});
