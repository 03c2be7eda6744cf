import { describe, expect, it, vi } from 'vitest';
import { ApiError, TransportError } from '../../../../src/apiserver/client/api-error.js';
import { KeyedQueue } from '../../../../src/apiserver/client/keyed-queue.js';
import { nullLogger } from '../../../../src/log/logger.js';
import { FakeGate } from './gate.js';

describe('KeyedQueue', () => {
  it('coalesces any number of changes to one object, made while the server is away, into one run with the latest state', async () => {
    const gate = new FakeGate();
    gate.down();
    const latest = new Map<string, number>();
    const sent: [string, number][] = [];
    const q = new KeyedQueue('test', async (k) => void sent.push([k, latest.get(k)!]), gate, nullLogger);
    for (let i = 1; i <= 1000; i++)
      for (const k of ['a', 'b', 'c']) {
        latest.set(k, i);
        q.add(k);
      }
    expect(q.size).toBe(3); // bounded by objects, not by changes
    expect(sent).toEqual([]);
    gate.up();
    await q.idle();
    expect(sent.sort()).toEqual([
      ['a', 1000],
      ['b', 1000],
      ['c', 1000],
    ]);
  });

  it('runs a runWhenBack key once when the server returns, though a tick was held for it meanwhile', async () => {
    const gate = new FakeGate();
    let runs = 0;
    let finish: () => void = () => {};
    const q = new KeyedQueue(
      'lease',
      () =>
        new Promise<void>((r) => {
          runs++;
          finish = r;
        }),
      gate,
      nullLogger,
      { concurrency: 1 },
    );
    q.runWhenBack('lease');
    gate.down();
    q.add('lease'); // the renew tick while the server is away: held
    gate.up();
    expect(runs).toBe(1);
    finish();
    await q.idle();
    expect(runs).toBe(1);
    // Not held this time: the return alone asks for it.
    gate.down();
    gate.up();
    expect(runs).toBe(2);
    finish();
    await q.idle();
    expect(runs).toBe(2);
  });

  it('keeps a key that failed because the server went away, and runs it when the server is back', async () => {
    const gate = new FakeGate();
    let fail = true;
    const runs: string[] = [];
    const q = new KeyedQueue(
      'test',
      async (k) => {
        runs.push(k);
        if (fail) {
          gate.down();
          throw new TransportError('refused', 'ECONNREFUSED');
        }
      },
      gate,
      nullLogger,
    );
    q.add('x');
    // Idle: the run is over and its failure handled (held keys do not count as work).
    await q.idle();
    expect(runs).toEqual(['x']);
    expect(q.size).toBe(1);
    fail = false;
    gate.up();
    await q.idle();
    expect(runs).toEqual(['x', 'x']);
    expect(q.size).toBe(0);
  });

  it('never runs one key twice at the same time; a change during a run means one more run after it', async () => {
    const gate = new FakeGate();
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    let release: () => void = () => {};
    let firstRunStarted: () => void = () => {};
    const started = new Promise<void>((r) => (firstRunStarted = r));
    const q = new KeyedQueue(
      'test',
      async () => {
        runs++;
        active++;
        maxActive = Math.max(maxActive, active);
        if (runs === 1) {
          firstRunStarted();
          await new Promise<void>((r) => (release = r));
        }
        active--;
      },
      gate,
      nullLogger,
    );
    q.add('k');
    await started;
    // Two changes while the first run is in progress.
    q.add('k');
    q.add('k');
    release();
    await q.idle();
    expect(maxActive).toBe(1);
    expect(runs).toBe(2);
  });

  it('keeps backing off a key that fails again soon after one success', async () => {
    vi.useFakeTimers();
    try {
      const gate = new FakeGate();
      const outcomes = ['fail', 'ok', 'fail', 'ok'];
      let runs = 0;
      const q = new KeyedQueue(
        'test',
        async () => {
          if (outcomes[runs++] === 'fail') throw new ApiError(500, 'InternalError', 'etcd leader changed');
        },
        gate,
        nullLogger,
      );
      q.add('k');
      await vi.advanceTimersByTimeAsync(0);
      expect(runs).toBe(1);
      await vi.advanceTimersByTimeAsync(240); // first retry: 200 ms, +20 % jitter at most
      expect(runs).toBe(2);
      q.add('k'); // a change right after the success; it fails again
      await vi.advanceTimersByTimeAsync(0);
      expect(runs).toBe(3);
      // Not back at 200 ms: one success in between is not a recovery.
      await vi.advanceTimersByTimeAsync(390);
      expect(runs).toBe(3);
      await vi.advanceTimersByTimeAsync(100);
      expect(runs).toBe(4);
      await q.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('sends everything held while the server was away as soon as it is back, at most `concurrency` at a time', async () => {
    const gate = new FakeGate();
    gate.down();
    let active = 0;
    let maxActive = 0;
    const waiting: (() => void)[] = [];
    const done: string[] = [];
    const q = new KeyedQueue(
      'test',
      async (k) => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise<void>((r) => waiting.push(r));
        active--;
        done.push(k);
      },
      gate,
      nullLogger,
      { concurrency: 8 },
    );
    const keys = Array.from({ length: 50 }, (_, i) => `pod-${i}`);
    for (let round = 0; round < 3; round++) q.addAll(keys);
    expect(q.size).toBe(50);
    expect(active).toBe(0);
    gate.up();
    expect(active).toBe(8); // at once, not one after another
    while (done.length < 50) {
      waiting.splice(0).forEach((r) => r());
      await new Promise((r) => setImmediate(r));
    }
    await q.idle();
    expect(maxActive).toBe(8);
    expect(done.sort()).toEqual([...keys].sort()); // each once
  });

  it('addAfter runs a key later, unless it is added earlier; of two delays the shorter wins', async () => {
    vi.useFakeTimers();
    try {
      const gate = new FakeGate();
      const runs: string[] = [];
      const q = new KeyedQueue('test', async (k) => void runs.push(k), gate, nullLogger);
      q.addAfter('a', 1000);
      q.addAfter('a', 3000); // later: ignored
      q.addAfter('b', 1000);
      q.addAfter('b', 500); // sooner: replaces
      await vi.advanceTimersByTimeAsync(600);
      expect(runs).toEqual(['b']);
      await vi.advanceTimersByTimeAsync(500);
      expect(runs).toEqual(['b', 'a']);
      await vi.advanceTimersByTimeAsync(5000);
      expect(runs).toEqual(['b', 'a']);
      q.addAfter('c', 1000);
      q.add('c'); // now, and the timer is gone
      await vi.advanceTimersByTimeAsync(5000);
      expect(runs).toEqual(['b', 'a', 'c']);
      await q.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a key woken many times during its run is one more run, and one entry', async () => {
    const gate = new FakeGate();
    let release: () => void = () => {};
    let runs = 0;
    const q = new KeyedQueue(
      'test',
      async () => {
        if (++runs === 1) await new Promise<void>((r) => (release = r));
      },
      gate,
      nullLogger,
    );
    q.add('k');
    for (let i = 0; i < 10_000; i++) q.add('k');
    expect(q.size).toBe(1);
    release();
    await q.idle();
    expect(runs).toBe(2);
  });
});
