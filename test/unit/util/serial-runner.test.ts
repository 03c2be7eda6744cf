import { describe, expect, it } from 'vitest';
import { KeyedSerialRunner } from '../../../src/util/serial-runner.js';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

describe('KeyedSerialRunner', () => {
  it('never runs one key twice at once, and collapses requests during a run into one more run', async () => {
    const gates: Array<ReturnType<typeof deferred>> = [];
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const r = new KeyedSerialRunner<string>(async () => {
      runs++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      const g = deferred();
      gates.push(g);
      await g.promise;
      running--;
    });
    const first = r.run('a');
    const during = [r.run('a'), r.run('a'), r.run('a')];
    expect(runs).toBe(1);
    gates[0]!.resolve();
    await first;
    await Promise.resolve();
    expect(runs).toBe(2);
    gates[1]!.resolve();
    await Promise.all(during);
    expect(runs).toBe(2);
    expect(maxRunning).toBe(1);
  });

  it('answers a caller only with a run that started after its request', async () => {
    const started: number[] = [];
    let n = 0;
    const gate = deferred();
    const r = new KeyedSerialRunner<string>(async () => {
      started.push(++n);
      if (n === 1) await gate.promise;
    });
    const a = r.run('k');
    let bDone = false;
    const b = r.run('k').then(() => (bDone = true));
    gate.resolve();
    await a;
    expect(bDone).toBe(false);
    await b;
    expect(started).toEqual([1, 2]);
  });

  it('runs different keys side by side; a failure rejects only those waiting on that run', async () => {
    let fail = true;
    const r = new KeyedSerialRunner<string>(async (k) => {
      if (k === 'bad' && fail) throw new Error('boom');
    });
    await expect(r.run('bad')).rejects.toThrow('boom');
    await expect(r.run('good')).resolves.toBeUndefined();
    fail = false;
    await expect(r.run('bad')).resolves.toBeUndefined();
    await r.idle();
  });

  it('with a concurrency limit, runs at most that many keys at once, in the order asked', async () => {
    const gates = new Map<string, ReturnType<typeof deferred>>();
    const started: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const r = new KeyedSerialRunner<string>(
      async (k) => {
        started.push(k);
        running++;
        maxRunning = Math.max(maxRunning, running);
        const g = deferred();
        gates.set(k, g);
        await g.promise;
        running--;
      },
      { concurrency: 2 },
    );
    const done = ['a', 'b', 'c', 'd'].map((k) => r.run(k));
    expect(started).toEqual(['a', 'b']);
    expect(r.pendingKeys().sort()).toEqual(['a', 'b', 'c', 'd']);
    gates.get('b')!.resolve();
    await done[1];
    expect(started).toEqual(['a', 'b', 'c']);
    gates.get('a')!.resolve();
    gates.get('c')!.resolve();
    await Promise.all([done[0], done[2]]);
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    gates.get('d')!.resolve();
    await Promise.all(done);
    expect(maxRunning).toBe(2);
    expect(r.pendingKeys()).toEqual([]);
  });

  it('joins requests for a key that waits for a slot into its one run', async () => {
    const hold = deferred();
    const runs: string[] = [];
    const r = new KeyedSerialRunner<string>(
      async (k) => {
        runs.push(k);
        if (k === 'busy') await hold.promise;
      },
      { concurrency: 1 },
    );
    const busy = r.run('busy');
    const waiting = [r.run('k'), r.run('k'), r.run('k')];
    hold.resolve();
    await Promise.all([busy, ...waiting]);
    expect(runs).toEqual(['busy', 'k']);
  });

  it("puts a key's follow-up run behind the keys already waiting for a slot", async () => {
    const gates: Array<ReturnType<typeof deferred>> = [];
    const started: string[] = [];
    const r = new KeyedSerialRunner<string>(
      async (k) => {
        started.push(k);
        const g = deferred();
        gates.push(g);
        await g.promise;
      },
      { concurrency: 1 },
    );
    const all = [r.run('a'), r.run('b'), r.run('a')]; // a runs; b waits; a again after b
    gates[0]!.resolve();
    await all[0];
    expect(started).toEqual(['a', 'b']);
    gates[1]!.resolve();
    await all[1];
    expect(started).toEqual(['a', 'b', 'a']);
    gates[2]!.resolve();
    await Promise.all(all);
  });

  it('a work function that throws before returning its promise fails only that run', async () => {
    const r = new KeyedSerialRunner<string>(
      ((k: string) => {
        if (k === 'sync') throw new Error('at once');
        return Promise.resolve();
      }) as (k: string) => Promise<void>,
      { concurrency: 1 },
    );
    await expect(r.run('sync')).rejects.toThrow('at once');
    await expect(r.run('ok')).resolves.toBeUndefined();
    expect(r.busy('sync')).toBe(false);
    await r.idle();
  });

  it('refuses a concurrency below 1', () => {
    expect(() => new KeyedSerialRunner<string>(async () => {}, { concurrency: 0 })).toThrow(/concurrency/);
  });

  it('wake: any number of wakes during a run are one more run; a failed woken run is dropped', async () => {
    const hold = deferred();
    let runs = 0;
    const r = new KeyedSerialRunner<string>(async (k) => {
      runs++;
      if (runs === 1) await hold.promise;
      if (k === 'bad') throw new Error('handled elsewhere');
    });
    r.wake('k');
    for (let i = 0; i < 1000; i++) r.wake('k');
    expect(runs).toBe(1);
    hold.resolve();
    await r.idle();
    expect(runs).toBe(2);
    r.wake('bad'); // would be an unhandled rejection if it escaped
    await r.idle();
    expect(runs).toBe(3);
  });
});
