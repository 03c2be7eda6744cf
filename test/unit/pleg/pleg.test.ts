// Choosing the mechanism at start (CRI events, containerd task events, relisting), what each kind
// of runtime event does, and falling back to fast relisting while a stream is down.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryLogger } from '../../../src/log/logger.js';
import { PodCache } from '../../../src/pleg/pod-cache.js';
import { RuntimeReader } from '../../../src/pleg/runtime-reader.js';
import { createPleg, type ContainerdEvents, type EventedPleg } from '../../../src/pleg/pleg.js';
import type { PodLifecycleEvent } from '../../../src/pleg/types.js';
import { ContainerdEventsError, type ContainerdTaskEvent } from '../../../src/cri/containerd-events.js';
import { ContainerEventType, ContainerState, type ContainerStatus } from '../../../src/cri/cri-types.js';
import { criOutput } from '../../support/cri-messages.js';
import { waitFor } from '../../support/wait.js';
import { container, FakeRuntime, sandbox } from './fake-runtime.js';

const A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const WAIT = { timeoutMs: 10_000 };

type SubscribeMode = 'open' | 'unimplemented' | 'unavailable';

class FakeContainerdEvents implements ContainerdEvents {
  mode: SubscribeMode = 'open';
  subscriptions = 0;
  closed = false;
  private push: ((e: ContainerdTaskEvent) => void) | undefined;
  private end: ((err?: ContainerdEventsError) => void) | undefined;

  subscribeTaskEvents(onEvent: (e: ContainerdTaskEvent) => void, onEnd: (err?: ContainerdEventsError) => void) {
    this.subscriptions++;
    if (this.mode === 'open') {
      this.push = onEvent;
      this.end = onEnd;
    } else {
      const code = this.mode === 'unimplemented' ? 12 : 14;
      setImmediate(() => onEnd(new ContainerdEventsError(code, this.mode)));
    }
    return { cancel: () => this.fail() };
  }

  send(e: Partial<ContainerdTaskEvent> & Pick<ContainerdTaskEvent, 'topic' | 'containerId'>): void {
    this.push?.({ namespace: 'k8s.io', processId: '', publishedAtMs: 0, ...e });
  }

  fail(err?: ContainerdEventsError): void {
    const end = this.end;
    this.push = this.end = undefined;
    end?.(err);
  }

  close(): void {
    this.closed = true;
  }
}

let plegs: EventedPleg[] = [];
afterEach(() => {
  for (const p of plegs) p.stop();
  plegs = [];
});

function setup(runtimeName = 'containerd', runtimeVersion = 'v2.1.9') {
  const rt = new FakeRuntime();
  rt.sandboxes = [sandbox('sa', A), sandbox('sb', B)];
  rt.containers = [container('ca', 'sa', A, 'app'), container('cb', 'sb', B, 'app')];
  const cd = new FakeContainerdEvents();
  let cdCreated = 0;
  const events: PodLifecycleEvent[] = [];
  const { logger, lines } = memoryLogger(2);
  const cache = new PodCache();
  const reader = new RuntimeReader(rt.service, cache);
  const pleg = createPleg({
    runtime: rt.service,
    reader,
    endpoint: 'unix:///nonexistent/containerd.sock',
    runtimeName,
    runtimeVersion,
    logger,
    onEvent: (e) => events.push(e),
    relistPeriodMs: 3_600_000,
    eventedRelistPeriodMs: 7_200_000,
    confirmMs: 30,
    containerdEvents: () => {
      cdCreated++;
      return cd;
    },
  });
  plegs.push(pleg);
  return { rt, cd, cache, reader, events, lines, pleg, cdCreated: () => cdCreated };
}

function chosenLine(lines: string[]): Record<string, string> | undefined {
  const line = lines.find((l) => l.includes('PLEG mechanism chosen'));
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, string>);
}

function status(id: string, uid: string, state: ContainerState): ContainerStatus {
  const c = container(id, 'sa', uid, 'app', state);
  return {
    ...c,
    startedAt: 1,
    finishedAt: 2,
    exitCode: 137,
    reason: 'Error',
    message: '',
    mounts: [],
    logPath: '',
    resources: null,
    user: null,
  };
}

/** A container event for `id` in A's sandbox `sa`, with the pod's status and the container's in `state`. */
function eventInA(id: string, type: ContainerEventType, createdAt: number, state: ContainerState) {
  return criOutput('ContainerEventResponse', {
    containerId: id,
    containerEventType: type,
    createdAt,
    podSandboxStatus: { ...sandbox('sa', A), network: null },
    containersStatuses: [status(id, A, state)],
  });
}

async function startAndSettle(s: ReturnType<typeof setup>): Promise<void> {
  s.pleg.start();
  await waitFor(() => chosenLine(s.lines), { ...WAIT, what: 'the mechanism to be chosen' });
  await waitFor(() => s.events.length >= 4, { ...WAIT, what: 'the first relist' });
  s.events.length = 0;
}

describe('choosing the mechanism', () => {
  it('uses CRI GetContainerEvents when the runtime serves it', async () => {
    const s = setup();
    s.rt.eventsMode = 'open';
    await startAndSettle(s);
    expect(s.pleg.mechanism()).toBe('cri-events');
    expect(chosenLine(s.lines)).toMatchObject({
      mechanism: 'cri-events',
      relistPeriod: '7200000ms',
      reason: 'the runtime serves CRI GetContainerEvents',
    });
    expect(s.cdCreated()).toBe(0);
  });

  it('falls back to containerd task events when GetContainerEvents is UNIMPLEMENTED on containerd', async () => {
    const s = setup();
    await startAndSettle(s);
    expect(s.pleg.mechanism()).toBe('containerd-events');
    expect(chosenLine(s.lines)).toMatchObject({ mechanism: 'containerd-events', relistPeriod: '7200000ms' });
    expect(chosenLine(s.lines)?.reason).toMatch(/GetContainerEvents is not served \(UNIMPLEMENTED\)/);
    expect(s.cd.subscriptions).toBe(1);
  });

  it('goes straight to containerd task events on containerd 1.x, whose CRI events are not broadcast', async () => {
    const s = setup('containerd', '1.7.24~ds1');
    s.rt.eventsMode = 'open';
    await startAndSettle(s);
    expect(s.pleg.mechanism()).toBe('containerd-events');
    expect(chosenLine(s.lines)?.reason).toMatch(
      /^containerd 1\.7\.24~ds1 does not broadcast CRI GetContainerEvents .*containerd#7318.*; containerd task events/,
    );
    expect(s.rt.eventSubscriptions).toBe(0);
    expect(s.cd.subscriptions).toBe(1);
  });

  it('relists every second when the runtime is not containerd and has no CRI events', async () => {
    const s = setup('cri-o');
    await startAndSettle(s);
    expect(s.pleg.mechanism()).toBe('relist');
    expect(chosenLine(s.lines)).toMatchObject({ mechanism: 'relist', relistPeriod: '3600000ms' });
    expect(chosenLine(s.lines)?.reason).toMatch(/runtime is cri-o, not containerd/);
    expect(s.cdCreated()).toBe(0);
  });

  it('relists when containerd does not serve its event service either', async () => {
    const s = setup();
    s.cd.mode = 'unimplemented';
    await startAndSettle(s);
    expect(s.pleg.mechanism()).toBe('relist');
    expect(chosenLine(s.lines)).toMatchObject({ mechanism: 'relist' });
    expect(chosenLine(s.lines)?.reason).toMatch(/neither CRI GetContainerEvents nor containerd's event service/);
  });

  it("relists fast while containerd's event stream cannot be opened, and uses it once it can", async () => {
    const s = setup();
    s.cd.mode = 'unavailable';
    s.pleg.start();
    await waitFor(() => s.lines.some((l) => l.includes('PLEG event stream ended')), {
      ...WAIT,
      what: 'the failed subscription to be logged',
    });
    expect(s.pleg.mechanism()).toBe('relist');
    expect(chosenLine(s.lines)).toBeUndefined();
    s.cd.mode = 'open';
    await waitFor(() => s.pleg.mechanism() === 'containerd-events', { ...WAIT, what: 'the stream to come up' });
    expect(chosenLine(s.lines)).toMatchObject({ mechanism: 'containerd-events' });
  });

  it('closes the containerd client on stop', async () => {
    const s = setup();
    await startAndSettle(s);
    s.pleg.stop();
    expect(s.cd.closed).toBe(true);
  });
});

describe('containerd task events', () => {
  it("an exit wakes only the dead container's pod, once the CRI shows it", async () => {
    const s = setup();
    await startAndSettle(s);
    s.rt.setContainerState('cb', ContainerState.CONTAINER_EXITED);
    s.cd.send({ topic: '/tasks/exit', containerId: 'cb', processId: 'cb', exitStatus: 137 });
    await waitFor(() => s.events.length > 0, { ...WAIT, what: 'ContainerDied' });
    expect(s.events).toEqual([{ podUid: B, type: 'ContainerDied', id: 'cb', name: 'app' }]);
  });

  it('an exec process ending does not cost a relist', async () => {
    const s = setup();
    await startAndSettle(s);
    const lists = s.rt.lists;
    const statuses = s.rt.statusCalls;
    // Follow-ups are timers: on a fake clock, every one the exit could arm is run below.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      s.cd.send({ topic: '/tasks/exit', containerId: 'ca', processId: 'exec-probe-1', exitStatus: 0 });
      // The marker: an exit of the other pod's container, read (by id) on the same turn as a read of ca would be.
      s.rt.setContainerState('cb', ContainerState.CONTAINER_EXITED);
      s.cd.send({ topic: '/tasks/exit', containerId: 'cb', processId: 'cb', exitStatus: 0 });
      await waitFor(() => s.rt.statusCalls > statuses, { ...WAIT, what: 'the read of the exit event' });
      await vi.advanceTimersByTimeAsync(10_000);
      expect(s.rt.statusCalls - statuses).toBe(1);
      expect(s.rt.lists).toBe(lists);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an OOM kill marks the ContainerDied that follows', async () => {
    const s = setup();
    await startAndSettle(s);
    s.cd.send({ topic: '/tasks/oom', containerId: 'ca' });
    s.rt.setContainerState('ca', ContainerState.CONTAINER_EXITED);
    s.cd.send({ topic: '/tasks/exit', containerId: 'ca', processId: 'ca', exitStatus: 137 });
    await waitFor(() => s.events.length > 0, { ...WAIT, what: 'ContainerDied' });
    expect(s.events).toEqual([{ podUid: A, type: 'ContainerDied', id: 'ca', name: 'app', oomKilled: true }]);
  });

  it('relists fast while the stream is down and resubscribes', async () => {
    const s = setup();
    await startAndSettle(s);
    s.cd.fail(new ContainerdEventsError(14, 'Connection dropped'));
    expect(s.pleg.mechanism()).toBe('relist');
    expect(
      s.lines.some((l) => l.includes('PLEG event stream ended') && l.includes('Connection dropped')),
      s.lines.join('\n'),
    ).toBe(true);
    await waitFor(() => s.pleg.mechanism() === 'containerd-events', { ...WAIT, what: 'the stream to be back' });
    expect(s.cd.subscriptions).toBe(2);
    // What happened while it was down is picked up by the relist made on reconnecting.
    expect(s.lines.some((l) => l.includes('PLEG event stream is back'))).toBe(true);
  });
});

describe('CRI container events', () => {
  // kubernetes#123087: the kubelet's evented PLEG wrote an event's status into its cache, and a pod
  // worker that synced from it started a container a second time.
  it("writes what the runtime answers, never an event's status, and a creation's read is what the worker syncs from", async () => {
    const s = setup();
    s.rt.eventsMode = 'open';
    await startAndSettle(s);
    const done = s.reader.creating(A);
    // containerd sends CONTAINER_CREATED before CreateContainer answers; the pod read it causes
    // does not list the container yet.
    s.rt.sendEvent(eventInA('ca2', ContainerEventType.CONTAINER_CREATED_EVENT, 3, ContainerState.CONTAINER_CREATED));
    // So does a stale STOPPED event about a container the runtime shows running.
    s.rt.sendEvent(eventInA('ca', ContainerEventType.CONTAINER_STOPPED_EVENT, 3, ContainerState.CONTAINER_EXITED));
    const statuses = s.rt.statusCalls;
    await waitFor(() => s.rt.statusCalls > statuses, { ...WAIT, what: "the read of the stale event's container" });
    await s.reader.idle();
    expect(s.cache.get(A).pod?.containers.map((c) => [c.id, c.state])).toEqual([
      ['ca', ContainerState.CONTAINER_RUNNING],
    ]);
    expect(s.events).toEqual([]);
    s.rt.containers.push(container('ca2', 'sa', A, 'sidecar'));
    const t = done([{ kind: 'container', id: 'ca2', sandboxId: 'sa' }]);
    // The worker's next sync waits for a view newer than its creation: that view has the container.
    const seen = await s.reader.getNewerThan(A, t);
    expect(seen.pod?.containers.map((c) => c.id).sort()).toEqual(['ca', 'ca2']);
  });

  it('reads the object an event names by id, an unknown one with the pod the event names, never every pod', async () => {
    const s = setup();
    s.rt.eventsMode = 'open';
    await startAndSettle(s);
    const full = s.rt.lists - s.rt.filteredLists;
    const statuses = s.rt.statusCalls;
    s.rt.setContainerState('ca', ContainerState.CONTAINER_EXITED);
    s.rt.sendEvent(eventInA('ca', ContainerEventType.CONTAINER_STOPPED_EVENT, 3, ContainerState.CONTAINER_EXITED));
    await waitFor(() => s.events.length === 1, { timeoutMs: 5000, what: 'ContainerDied' });
    expect(s.events).toEqual([{ podUid: A, type: 'ContainerDied', id: 'ca', name: 'app' }]);
    // Known to the cache: its status by id, no list.
    expect(s.rt.statusCalls - statuses).toBe(1);
    expect(s.rt.lists).toBe(full + s.rt.filteredLists);
    s.rt.removeObject('ca');
    s.rt.sendEvent(
      criOutput('ContainerEventResponse', {
        containerId: 'ca',
        containerEventType: ContainerEventType.CONTAINER_DELETED_EVENT,
        createdAt: 4,
        containersStatuses: [],
      }),
    );
    await waitFor(() => s.events.length === 2, { timeoutMs: 5000, what: 'ContainerRemoved' });
    expect(s.events.map((e) => e.type)).toEqual(['ContainerDied', 'ContainerRemoved']);
    // A container nobody here created, started in A's sandbox (crictl): A is read, not every pod.
    s.rt.containers.push(container('cx', 'sa', A, 'debug'));
    s.rt.sendEvent(eventInA('cx', ContainerEventType.CONTAINER_STARTED_EVENT, 5, ContainerState.CONTAINER_RUNNING));
    await waitFor(() => s.events.length === 3, { timeoutMs: 5000, what: 'ContainerStarted' });
    expect(s.events[2]).toEqual({ podUid: A, type: 'ContainerStarted', id: 'cx', name: 'debug' });
    expect(s.rt.filteredLists).toBe(1);
    expect(s.rt.lists - s.rt.filteredLists).toBe(full);
  });

  it("a relist that overlapped an event does not undo what the event's read found", async () => {
    const s = setup();
    s.rt.eventsMode = 'open';
    await startAndSettle(s);
    // The relist lists both pods with their containers running; B's changed, so it asks its status.
    // While that answer is awaited, A's container exits, its event comes, and the event's own read
    // (by id, started later) writes the exit; the relist then writes what it listed.
    s.rt.setContainerState('cb', ContainerState.CONTAINER_EXITED);
    const status = s.rt.service.containerStatus;
    let held = false;
    s.rt.service.containerStatus = async (id) => {
      if (id !== 'cb' || held) return status(id);
      held = true;
      s.rt.setContainerState('ca', ContainerState.CONTAINER_EXITED);
      s.rt.sendEvent(
        criOutput('ContainerEventResponse', {
          containerId: 'ca',
          containerEventType: ContainerEventType.CONTAINER_STOPPED_EVENT,
          createdAt: 3,
          containersStatuses: [],
        }),
      );
      await waitFor(() => s.events.some((e) => e.id === 'ca'), {
        timeoutMs: 5000,
        what: "ContainerDied from the event's read",
      });
      return status(id);
    };
    await s.pleg.relist();
    expect(held).toBe(true);
    expect(s.cache.running('ca')).toBe(false);
    await s.pleg.relist();
    expect(s.events.filter((e) => e.id === 'ca')).toEqual([
      { podUid: A, type: 'ContainerDied', id: 'ca', name: 'app' },
    ]);
  });

  it('falls back to fast relisting when the CRI stream breaks, and comes back', async () => {
    const s = setup();
    s.rt.eventsMode = 'open';
    await startAndSettle(s);
    s.rt.endEvents();
    expect(s.pleg.mechanism()).toBe('relist');
    await waitFor(() => s.pleg.mechanism() === 'cri-events', { ...WAIT, what: 'the CRI stream to be back' });
    expect(s.rt.eventSubscriptions).toBe(2);
  });
});
