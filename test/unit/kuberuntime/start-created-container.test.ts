// A created container whose start a killed agent left in containerd's hands: the second StartContainer's
// "already in starting state" is waited out by reading the container, not thrown into the 10 s error back-off.
import { describe, expect, it } from 'vitest';
import { ContainerState, type ContainerStatus } from '../../../src/cri/cri-types.js';
import { startCreatedContainer } from '../../../src/kuberuntime/start-created-container.js';

const STARTING = new Error(
  'CRI StartContainer failed: failed to set starting state for container "c1": container is already in starting state',
);

function runtime(startError: Error | undefined, states: number[]) {
  const calls: string[] = [];
  return {
    calls,
    rt: {
      startContainer: async (id: string) => {
        calls.push(`start ${id}`);
        if (startError) throw startError;
      },
      containerStatus: async (id: string) => {
        calls.push(`status ${id}`);
        const state = states.length > 1 ? states.shift()! : states[0]!;
        return { state } as ContainerStatus;
      },
    },
  };
}

/** A clock the sleeps move, so the deadline is reached without waiting. */
function clock() {
  let t = 0;
  return { now: () => t, sleep: async (ms: number) => void (t += ms) };
}

describe('startCreatedContainer', () => {
  it('starts a created container with one call', async () => {
    const r = runtime(undefined, [ContainerState.CONTAINER_RUNNING]);
    await startCreatedContainer(r.rt, 'c1', clock());
    expect(r.calls).toEqual(['start c1']);
  });

  it("waits out another start still in the runtime's hands, reading the container until it leaves CREATED", async () => {
    const r = runtime(STARTING, [
      ContainerState.CONTAINER_CREATED,
      ContainerState.CONTAINER_CREATED,
      ContainerState.CONTAINER_RUNNING,
    ]);
    await startCreatedContainer(r.rt, 'c1', clock());
    expect(r.calls).toEqual(['start c1', 'status c1', 'status c1', 'status c1']);
  });

  it('settles for an exit too: the next sync reads it', async () => {
    const r = runtime(STARTING, [ContainerState.CONTAINER_EXITED]);
    await expect(startCreatedContainer(r.rt, 'c1', clock())).resolves.toBeUndefined();
  });

  it('throws the answer when the start never settles, and any other failure at once', async () => {
    const stuck = runtime(STARTING, [ContainerState.CONTAINER_CREATED]);
    await expect(startCreatedContainer(stuck.rt, 'c1', clock())).rejects.toBe(STARTING);
    const other = new Error('CRI StartContainer failed: no such file');
    const r = runtime(other, [ContainerState.CONTAINER_CREATED]);
    await expect(startCreatedContainer(r.rt, 'c1', clock())).rejects.toBe(other);
    expect(r.calls).toEqual(['start c1']);
  });
});
