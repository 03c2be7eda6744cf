// The wait of graceful node shutdown for its statuses to be in the server (status-flush.ts): nothing
// polled, ended by the events that can end it, another node round while the node's status is not there.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StatusFlush } from '../../../src/apiserver/status-flush.js';

function parts() {
  const p = {
    up: true,
    nodePosted: false,
    podsPosted: false,
    nodeRounds: 0,
    podPasses: 0,
    asked: [] as (readonly string[])[],
  };
  const flush = new StatusFlush({
    serverUp: () => p.up,
    nodeStatusPosted: () => p.nodePosted,
    syncNodeStatus: () => void p.nodeRounds++,
    podStatusesPosted: (uids) => (p.asked.push(uids), p.podsPosted),
    syncPods: () => void p.podPasses++,
  });
  return { p, flush };
}

describe('StatusFlush', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('asks for a node round and a pass over the pods, and resolves when a later event finds both there', async () => {
    const { p, flush } = parts();
    let done = false;
    void flush.flush(['u1'], 60_000).then(() => (done = true));
    expect([p.nodeRounds, p.podPasses]).toEqual([1, 1]);
    p.nodePosted = true;
    await vi.advanceTimersByTimeAsync(30_000);
    // Nothing polls: the change is seen at the next event, not before.
    expect(done).toBe(false);
    flush.recheck();
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(false);
    p.podsPosted = true;
    flush.recheck();
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
    expect(p.asked.at(-1)).toEqual(['u1']);
  });

  it('follows a node round that left the status unposted with another, and only while someone waits', async () => {
    const { p, flush } = parts();
    p.podsPosted = true;
    let done = false;
    void flush.flush([], 60_000).then(() => (done = true));
    flush.nodeRoundEnded();
    expect(p.nodeRounds).toBe(2);
    p.nodePosted = true;
    flush.nodeRoundEnded();
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
    p.nodePosted = false;
    flush.nodeRoundEnded();
    expect(p.nodeRounds).toBe(2);
  });

  it('ends at once while the server is away, when it goes away, at the deadline, and when the API side stops', async () => {
    const { p, flush } = parts();
    p.up = false;
    let ended = 0;
    await flush.flush([], 60_000).then(() => ended++);
    p.up = true;
    void flush.flush([], 60_000).then(() => ended++);
    p.up = false;
    flush.recheck();
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toBe(2);
    p.up = true;
    void flush.flush([], 5_000).then(() => ended++);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(ended).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(ended).toBe(3);
    void flush.flush([], 60_000).then(() => ended++);
    flush.endAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toBe(4);
  });
});
