// The relist engine: the kubelet's state table per container and sandbox, events only for the pod
// that changed, coalescing of requested relists, follow-ups until the CRI shows an announced change,
// and the health signal.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nullLogger } from '../../../src/log/logger.js';
import { PodCache } from '../../../src/pleg/pod-cache.js';
import { RuntimeReader } from '../../../src/pleg/runtime-reader.js';
import { RelistPleg } from '../../../src/pleg/relist-pleg.js';
import type { PodLifecycleEvent } from '../../../src/pleg/types.js';
import { ContainerState, PodSandboxState } from '../../../src/cri/cri-types.js';
import { waitFor } from '../../support/wait.js';
import { container, FakeRuntime, sandbox } from './fake-runtime.js';

const A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

let plegs: RelistPleg[] = [];
afterEach(() => {
  for (const p of plegs) p.stop();
  plegs = [];
});

function setup(
  opts: { now?: () => number; onRelist?: (d: number, i: number | undefined) => void; onRuntimeBack?: () => void } = {},
): { rt: FakeRuntime; reader: RuntimeReader; pleg: RelistPleg; events: PodLifecycleEvent[] } {
  const rt = new FakeRuntime();
  rt.sandboxes = [sandbox('sa', A), sandbox('sb', B)];
  rt.containers = [container('ca', 'sa', A, 'app'), container('cb', 'sb', B, 'app')];
  const events: PodLifecycleEvent[] = [];
  // A long period: the tests drive relists themselves.
  const reader = new RuntimeReader(rt.service, new PodCache(), { now: opts.now });
  const pleg = new RelistPleg({
    reader,
    periodMs: 3_600_000,
    logger: nullLogger,
    onEvent: (e) => events.push(e),
    ...opts,
  });
  plegs.push(pleg);
  return { rt, reader, pleg, events };
}

const brief = (es: PodLifecycleEvent[]) => es.map((e) => [e.podUid, e.type, e.id]);

describe('RelistPleg diffing', () => {
  it('reports what it finds on the first relist, then nothing while nothing changes', async () => {
    const { pleg, events } = setup();
    await pleg.relist();
    expect(brief(events)).toEqual([
      [A, 'SandboxChanged', 'sa'],
      [A, 'ContainerStarted', 'ca'],
      [B, 'SandboxChanged', 'sb'],
      [B, 'ContainerStarted', 'cb'],
    ]);
    events.length = 0;
    await pleg.relist();
    expect(events).toEqual([]);
  });

  it('a container that dies wakes its own pod only', async () => {
    const { rt, pleg, events } = setup();
    await pleg.relist();
    events.length = 0;
    rt.setContainerState('cb', ContainerState.CONTAINER_EXITED);
    await pleg.relist();
    expect(events).toEqual([{ podUid: B, type: 'ContainerDied', id: 'cb', name: 'app' }]);
  });

  it('a new container that starts is ContainerStarted; a created one is ContainerChanged', async () => {
    const { rt, pleg, events } = setup();
    await pleg.relist();
    events.length = 0;
    rt.containers.push(container('ca2', 'sa', A, 'sidecar', ContainerState.CONTAINER_CREATED));
    await pleg.relist();
    expect(brief(events)).toEqual([[A, 'ContainerChanged', 'ca2']]);
    rt.setContainerState('ca2', ContainerState.CONTAINER_RUNNING);
    await pleg.relist();
    expect(brief(events.slice(1))).toEqual([[A, 'ContainerStarted', 'ca2']]);
  });

  it('an exited container that is removed is ContainerRemoved; a running one died first', async () => {
    const { rt, pleg, events } = setup();
    rt.setContainerState('ca', ContainerState.CONTAINER_EXITED);
    await pleg.relist();
    events.length = 0;
    rt.removeObject('ca');
    rt.removeObject('cb');
    await pleg.relist();
    expect(brief(events)).toEqual([
      [A, 'ContainerRemoved', 'ca'],
      [B, 'ContainerDied', 'cb'],
      [B, 'ContainerRemoved', 'cb'],
    ]);
  });

  it('a sandbox that stops or goes away is SandboxChanged for its pod', async () => {
    const { rt, pleg, events } = setup();
    await pleg.relist();
    events.length = 0;
    rt.setSandboxState('sa', PodSandboxState.SANDBOX_NOTREADY);
    await pleg.relist();
    rt.removeObject('sa');
    await pleg.relist();
    expect(brief(events)).toEqual([
      [A, 'SandboxChanged', 'sa'],
      [A, 'SandboxChanged', 'sa'],
    ]);
  });

  it('ignores objects without the kubelet labels', async () => {
    const { rt, pleg, events } = setup();
    rt.containers.push({ ...container('foreign', 'sa', A, 'x'), labels: { app: 'crictl' } });
    await pleg.relist();
    expect(events.some((e) => e.id === 'foreign')).toBe(false);
  });

  it('flags the death of a container the runtime reported OOM-killed', async () => {
    const { rt, pleg, events } = setup();
    await pleg.relist();
    pleg.markOomKilled('ca');
    rt.setContainerState('ca', ContainerState.CONTAINER_EXITED);
    rt.setContainerState('cb', ContainerState.CONTAINER_EXITED);
    await pleg.relist();
    expect(events.filter((e) => e.type === 'ContainerDied').map((e) => [e.id, e.oomKilled ?? false])).toEqual([
      ['ca', true],
      ['cb', false],
    ]);
  });
});

describe('RelistPleg relist requests', () => {
  it('a burst of requests in one turn costs one relist', async () => {
    const { rt, pleg } = setup();
    pleg.start();
    await waitFor(() => rt.lists === 1, { timeoutMs: 10_000, what: 'the first relist' });
    await pleg.relist();
    const before = rt.lists;
    for (let i = 0; i < 20; i++) pleg.requestRelist();
    await waitFor(() => rt.lists > before, { timeoutMs: 10_000, what: 'the requested relist' });
    await pleg.relist();
    // The requested one plus the explicit one above.
    expect(rt.lists - before).toBe(2);
  });

  it('asking while a relist is in flight runs exactly one more after it', async () => {
    const { rt, pleg } = setup();
    const first = pleg.relist();
    const second = pleg.relist();
    const third = pleg.relist();
    await Promise.all([first, second, third]);
    expect(rt.lists).toBe(2);
  });

  it('follows up until the CRI shows a change an event announced, then stops', async () => {
    const { rt, pleg, events } = setup();
    pleg.start();
    await waitFor(() => events.length === 4, { timeoutMs: 10_000, what: 'the first relist' });
    events.length = 0;
    // containerd announced the exit; its CRI plugin shows it three reads later. The cache knows
    // the container, so each read is of that one object (its status by id), never a list.
    let lag = 3;
    rt.onStatus = () => {
      if (--lag === 0) rt.setContainerState('ca', ContainerState.CONTAINER_EXITED);
    };
    const before = rt.lists;
    const statuses = rt.statusCalls;
    pleg.requestRelist({ id: 'ca', running: false });
    await waitFor(() => events.length > 0, { timeoutMs: 10_000, what: 'ContainerDied after follow-ups' });
    expect(events).toEqual([{ podUid: A, type: 'ContainerDied', id: 'ca', name: 'app' }]);
    expect(rt.statusCalls - statuses).toBe(3);
    expect(rt.lists).toBe(before);
    // No more follow-ups once it showed.
    const settled = rt.lists;
    await pleg.relist();
    expect(rt.lists).toBe(settled + 1);
  });

  it('an exit announced while the agent stops the object is read once the stop is answered, with no follow-up', async () => {
    const { rt, reader, pleg, events } = setup();
    pleg.start();
    await waitFor(() => events.length === 4, { timeoutMs: 10_000, what: 'the first relist' });
    events.length = 0;
    const statuses = rt.statusCalls;
    const answered = reader.stopping('ca');
    pleg.requestRelist({ id: 'ca', running: false });
    // The read would be on the next turn: none comes while the stop is in flight.
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(rt.statusCalls).toBe(statuses);
    // StopContainer returns once the CRI shows the exit.
    rt.setContainerState('ca', ContainerState.CONTAINER_EXITED);
    answered();
    await waitFor(() => events.length > 0, { timeoutMs: 10_000, what: 'ContainerDied after the stop' });
    expect(events).toEqual([{ podUid: A, type: 'ContainerDied', id: 'ca', name: 'app' }]);
    expect(rt.statusCalls - statuses).toBe(1);
    expect(reader.stopOf('ca')).toBeUndefined();
  });

  it('does not wait for an object the CRI does not know', async () => {
    const { rt, pleg } = setup();
    pleg.start();
    await waitFor(() => rt.lists === 1, { timeoutMs: 10_000, what: 'the first relist' });
    // Follow-ups are timers: on a fake clock, every one it could arm (and the give-up) is run below.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      pleg.requestRelist({ id: 'an-exec-or-foreign-task', running: false });
      await waitFor(() => rt.lists === 2, { timeoutMs: 10_000, what: 'the requested relist' });
      await vi.advanceTimersByTimeAsync(10_000);
      expect(vi.getTimerCount()).toBe(0);
      expect(rt.lists).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('RelistPleg health', () => {
  it('counts from the last successful relist; a failed one does not reset it', async () => {
    let t = 1_000;
    const { rt, pleg } = setup({ now: () => t });
    await pleg.relist();
    t += 2_500;
    expect(pleg.sinceLastRelistMs()).toBe(2_500);
    rt.failLists = true;
    await pleg.relist();
    t += 500;
    expect(pleg.sinceLastRelistMs()).toBe(3_000);
    rt.failLists = false;
    await pleg.relist();
    expect(pleg.sinceLastRelistMs()).toBe(0);
  });
});

describe('RelistPleg metrics', () => {
  it('reports each successful relist with its duration and the interval since the one before, and no failed one', async () => {
    const seen: Array<[number, number | undefined]> = [];
    const { rt, pleg } = setup({ onRelist: (d, i) => seen.push([d, i]) });
    await pleg.relist();
    rt.failLists = true;
    await pleg.relist();
    rt.failLists = false;
    await pleg.relist();
    expect(seen).toHaveLength(2);
    expect(seen[0]![1]).toBeUndefined();
    expect(seen[1]![1]).toBeGreaterThanOrEqual(seen[0]![0]); // it began after the first had ended
  });
});

describe('RelistPleg and a runtime that goes away', () => {
  it('says once when relisting works again, so that work waiting out a back-off is retried', async () => {
    let back = 0;
    const { rt, pleg } = setup({ onRuntimeBack: () => back++ });
    await pleg.relist();
    expect(back).toBe(0);
    rt.failLists = true;
    await pleg.relist();
    await pleg.relist();
    expect(back).toBe(0);
    rt.failLists = false;
    await pleg.relist();
    await pleg.relist();
    expect(back).toBe(1);
  });
});
