import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { PodWorkerSnapshot } from '../../../src/podworkers/pod-workers.js';
import type { RuntimePod } from '../../../src/runtime/runtime-pods.js';
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

function manager(pods: () => PodWorkerView[], getRuntimePod: (uid: string) => Promise<RuntimePod | undefined>): StatusManager {
  return new StatusManager({ getRuntimePod, pods, probes: probes(), nodeIP: '10.0.0.11', runtimeName: 'containerd', logger, now: () => new Date(T0 + 60_000) });
}

describe('StatusManager', () => {
  it('accepts the pod workers snapshot as its pod source', () => {
    const snap: PodWorkerSnapshot[] = [];
    const views: readonly PodWorkerView[] = snap;
    expect(views).toEqual([]);
  });

  it('computes a status in the background and tells listeners', async () => {
    const m = manager(() => [worker()], async () => runtimePod([sandbox()], [ctr('c1', 'app')]));
    const seen: string[] = [];
    m.onChange((uid, e) => seen.push(`${uid}:${e?.status.phase}`));
    m.update(UID);
    expect(m.get(UID)).toBeUndefined(); // not computed synchronously: the caller never waits
    await m.idle();
    expect(m.get(UID)?.status.phase).toBe('Running');
    expect(m.all().map((e) => e.key)).toEqual(['default/web-node1']);
    expect(seen).toEqual([`${UID}:Running`]);
  });

  it('folds many requests during a run into one more run', async () => {
    let calls = 0;
    const gates: Array<ReturnType<typeof deferred<RuntimePod | undefined>>> = [];
    const m = manager(
      () => [worker()],
      () => {
        calls++;
        const d = deferred<RuntimePod | undefined>();
        gates.push(d);
        return d.promise;
      },
    );
    m.update(UID);
    m.update(UID);
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(1);
    for (let i = 0; i < 10; i++) m.update(UID);
    gates[0]!.resolve(undefined);
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(2);
    gates[1]!.resolve(undefined);
    await m.idle();
    expect(calls).toBe(2);
  });

  it('notifies only when the status changed', async () => {
    const m = manager(() => [worker()], async () => runtimePod([sandbox()], [ctr('c1', 'app')]));
    let n = 0;
    m.onChange(() => n++);
    m.update(UID);
    await m.idle();
    m.update(UID);
    await m.idle();
    expect(n).toBe(1);
  });

  it('uses runtime state handed over with the request instead of reading it again', async () => {
    let reads = 0;
    const m = manager(() => [worker()], async () => {
      reads++;
      return runtimePod([sandbox()], [exited('c0', 'app', 1)]);
    });
    m.update(UID, { runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) });
    await m.idle();
    expect(reads).toBe(0);
    expect(m.get(UID)?.status.containerStatuses?.[0]?.state?.running).toBeDefined();
    // A later request without a snapshot (a PLEG event) reads the runtime, even if one came before.
    m.update(UID, { runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) });
    m.update(UID);
    await m.idle();
    expect(reads).toBe(1);
    expect(m.get(UID)?.status.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(1);
    // And the snapshot is used once: the next plain request reads again.
    m.update(UID);
    await m.idle();
    expect(reads).toBe(2);
  });

  it('keeps the last status when the runtime cannot be read', async () => {
    let fail = false;
    const m = manager(
      () => [worker()],
      async () => {
        if (fail) throw new Error('runtime down');
        return runtimePod([sandbox()], [ctr('c1', 'app')]);
      },
    );
    m.update(UID);
    await m.idle();
    fail = true;
    m.update(UID);
    await m.idle();
    expect(m.get(UID)?.status.phase).toBe('Running');
  });

  it('forgets a pod whose worker is gone, and says so', async () => {
    let pods = [worker()];
    const m = manager(() => pods, async () => undefined);
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
    let state = 'Syncing';
    const m = manager(() => [worker({ state })], async () => runtimePod([sandbox()], [exited('c1', 'app', 0)]));
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
      getRuntimePod: async () => runtimePod([sandbox()], [exited('c1', 'app', 1, { message: 'runtime says' })]),
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
});
