// The agent's own creations in the pod cache: the objects a worker says it made are read by id
// and nothing else; a worker's next read is that one; a relist leaves a pod being created to it;
// and the PLEG's task events about them cost no read, nor a full relist while the answer is awaited.
import { describe, expect, it } from 'vitest';
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
const WAIT = { timeoutMs: 5000 };

async function setup() {
  const rt = new FakeRuntime();
  rt.sandboxes = [sandbox('sb', B)];
  rt.containers = [container('cb', 'sb', B, 'app')];
  const cache = new PodCache();
  const reader = new RuntimeReader(rt.service, cache);
  await reader.refreshAll();
  return { rt, cache, reader };
}

describe("RuntimeReader: the agent's own creations", () => {
  it('reads what a worker created by id, and that read is the newer view its next step asks for', async () => {
    const { rt, cache, reader } = await setup();
    const lists = rt.lists;
    const statuses = rt.statusCalls;
    // A new pod: nothing of it was found by the last full read, so its first sync needs no read.
    expect(cache.has(A)).toBe(false);
    expect((await reader.getNewerThan(A, 0)).pod).toBeUndefined();
    const sandboxDone = reader.creating(A);
    rt.sandboxes.push(sandbox('sa', A));
    sandboxDone([{ kind: 'sandbox', id: 'sa' }]);
    const containerDone = reader.creating(A);
    rt.containers.push(container('ca', 'sa', A, 'app'));
    const t = containerDone([{ kind: 'container', id: 'ca', sandboxId: 'sa' }]);
    const seen = await reader.getNewerThan(A, t);
    expect(seen.at).toBeGreaterThan(t);
    expect(seen.pod?.sandboxes.map((s) => [s.id, s.state, s.hasStatus])).toEqual([
      ['sa', PodSandboxState.SANDBOX_READY, true],
    ]);
    expect(seen.pod?.containers.map((c) => [c.id, c.sandboxId, c.state, c.hasStatus])).toEqual([
      ['ca', 'sa', ContainerState.CONTAINER_RUNNING, true],
    ]);
    expect(seen.pod?.uid).toBe(A);
    // One status per created object, no list.
    expect(rt.lists).toBe(lists);
    expect(rt.statusCalls - statuses).toBe(2);
    // A relist afterwards asks for no status again.
    await reader.refreshAll();
    expect(rt.statusCalls - statuses).toBe(2);
  });

  it("a relist leaves a pod being created to its creation's read, and does not count as newer for it", async () => {
    const { rt, cache, reader } = await setup();
    const before = cache.tick();
    const done = reader.creating(A);
    rt.sandboxes.push(sandbox('sa', A));
    rt.containers.push(container('ca', 'sa', A, 'app', ContainerState.CONTAINER_CREATED));
    const statuses = rt.statusCalls;
    await reader.refreshAll();
    expect(rt.statusCalls).toBe(statuses);
    expect(cache.has(A)).toBe(false);
    expect(cache.get(A).at).toBeLessThanOrEqual(before);
    // The creation failed (nothing said): the next relist reads the pod as it is.
    done([]);
    await reader.refreshAll();
    expect(cache.get(A).pod?.containers.map((c) => c.state)).toEqual([ContainerState.CONTAINER_CREATED]);
  });

  it('a failed read of a creation leaves the entry as it was, so the worker reads the whole pod', async () => {
    const { rt, reader } = await setup();
    const done = reader.creating(A);
    rt.sandboxes.push(sandbox('sa', A));
    // The runtime does not answer the status (it is restarting): the read fails.
    rt.onStatus = () => {
      rt.onStatus = undefined;
      throw new Error('runtime restarting');
    };
    const t = done([{ kind: 'sandbox', id: 'sa' }]);
    const lists = rt.lists;
    const seen = await reader.getNewerThan(A, t);
    expect(rt.lists).toBe(lists + 1);
    expect(seen.pod?.sandboxes.map((s) => s.id)).toEqual(['sa']);
  });
});

describe("RelistPleg: task events of the agent's own creations", () => {
  function pleg(rt: FakeRuntime, reader: RuntimeReader) {
    const events: PodLifecycleEvent[] = [];
    const relists: string[] = [];
    const logger = {
      ...nullLogger,
      v: () => ({
        ...nullLogger,
        info: (msg: string, f?: Record<string, unknown>) =>
          void (msg === 'PLEG relist' && relists.push(String(f?.cause))),
      }),
    };
    const p = new RelistPleg({
      reader,
      periodMs: 60_000,
      logger: logger as unknown as typeof nullLogger,
      onEvent: (e) => events.push(e),
    });
    return { p, events, relists };
  }

  it("a start event that comes before the creation's answer waits for it, and then needs no read", async () => {
    const { rt, reader } = await setup();
    const { p, events, relists } = pleg(rt, reader);
    p.start();
    await waitFor(() => relists.length === 1, { ...WAIT, what: 'the first relist' });
    const lists = rt.lists;
    const statuses = rt.statusCalls;
    const done = reader.creating(A);
    rt.sandboxes.push(sandbox('sa', A));
    // containerd publishes /tasks/start of the pause before RunPodSandbox answers.
    p.requestRelist({ id: 'sa', running: true });
    await new Promise((r) => setImmediate(r));
    done([{ kind: 'sandbox', id: 'sa' }]);
    await waitFor(() => events.length === 1, { ...WAIT, what: 'SandboxChanged' });
    await reader.idle();
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual([{ podUid: A, type: 'SandboxChanged', id: 'sa' }]);
    expect(relists).toEqual(['request']);
    expect(rt.lists).toBe(lists);
    expect(rt.statusCalls - statuses).toBe(1);
    p.stop();
  });

  it("an event for an id nobody is creating is a stranger's: a full relist", async () => {
    const { rt, reader } = await setup();
    const { p, relists } = pleg(rt, reader);
    p.start();
    await waitFor(() => relists.length === 1, { ...WAIT, what: 'the first relist' });
    p.requestRelist({ id: 'foreign', running: true });
    await waitFor(() => relists.length === 2, { ...WAIT, what: 'the relist' });
    expect(relists).toEqual(['request', 'event']);
    p.stop();
  });
});
