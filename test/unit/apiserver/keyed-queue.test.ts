import { describe, expect, it, vi } from 'vitest';
import { ApiError, TransportError } from '../../../src/apiserver/api-error.js';
import { KeyedQueue } from '../../../src/apiserver/keyed-queue.js';
import { nullLogger } from '../../../src/log/logger.js';
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
    await new Promise((r) => setTimeout(r, 20));
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
    const q = new KeyedQueue(
      'test',
      async () => {
        runs++;
        active++;
        maxActive = Math.max(maxActive, active);
        if (runs === 1) await new Promise<void>((r) => (release = r));
        active--;
      },
      gate,
      nullLogger,
    );
    q.add('k');
    q.add('k');
    q.add('k');
    await new Promise((r) => setTimeout(r, 10));
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
});
