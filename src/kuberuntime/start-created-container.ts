// Starting a container the runtime holds in CREATED (one a killed agent made and did not start). When that
// agent died inside its own StartContainer, containerd still has the start in hand and answers a second one
// "container is already in starting state"; the start finishes by itself moments later, and no runtime
// event follows on containerd 1.x (the task's start was announced before the CRI store said RUNNING). So
// the answer is not an error to retry in the 10 s error back-off: the container is watched by id until
// the runtime's start has settled, and what it settled to is the next sync's to read.
import { setTimeout as delay } from 'node:timers/promises';
import { ContainerState, type RuntimeService } from '../cri/cri-types.js';
import { errorMessage } from '../util/error-message.js';

const STARTING_ELSEWHERE = 'already in starting state';
const POLL_MS = 100;
/** containerd's own StartContainer waits for the task's start; far shorter in practice. */
const SETTLE_DEADLINE_MS = 10_000;

export interface StartCreatedOptions {
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

export async function startCreatedContainer(
  runtime: Pick<RuntimeService, 'startContainer' | 'containerStatus'>,
  id: string,
  o: StartCreatedOptions = {},
): Promise<void> {
  try {
    await runtime.startContainer(id);
    return;
  } catch (err) {
    if (!errorMessage(err).includes(STARTING_ELSEWHERE)) throw err;
    const sleep = o.sleep ?? ((ms: number) => delay(ms));
    const now = o.now ?? Date.now;
    const deadline = now() + SETTLE_DEADLINE_MS;
    while (now() < deadline) {
      await sleep(POLL_MS);
      const status = await runtime.containerStatus(id);
      if (status.state !== ContainerState.CONTAINER_CREATED) return;
    }
    throw err;
  }
}
