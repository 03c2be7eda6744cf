import { describe, expect, it } from 'vitest';
import { cpuTurn } from '../../../src/util/cpu-turn.js';

const busy = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // a parse's worth of CPU
  }
};

describe('cpuTurn', () => {
  it('gives callers ready together one turn of the event loop each, with the loop turning between them', async () => {
    const order: string[] = [];
    const steps = ['a', 'b', 'c'].map((name) =>
      cpuTurn().then(() => {
        order.push(name);
        // Due before the next turn's check phase: it runs between two turns, not after all of them.
        setTimeout(() => order.push(`timer after ${name}`), 1);
        busy(5);
      }),
    );
    await Promise.all(steps);
    await new Promise((r) => setTimeout(r, 5));
    expect(order).toEqual(['a', 'timer after a', 'b', 'timer after b', 'c', 'timer after c']);
  });

  it('grants in the order asked, also to callers that ask while others wait', async () => {
    const order: number[] = [];
    const asks: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) asks.push(cpuTurn().then(() => void order.push(i)));
    asks.push(
      cpuTurn()
        .then(() => asks.push(cpuTurn().then(() => void order.push(6))))
        .then(() => void order.push(5)),
    );
    await Promise.all(asks);
    await asks.at(-1);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });
});
