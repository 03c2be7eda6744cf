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
});
