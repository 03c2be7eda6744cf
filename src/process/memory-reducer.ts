// Gives memory back after bursts. A burst of pod starts makes V8 grow its young generation (up to
// 32 MiB of semi-spaces) and it keeps that size until a full collection finds the allocation rate
// low. The usual cure, `--max-semi-space-size`, cannot be passed to a Node 20 single executable
// (no execArgv in its SEA config), so the agent runs a full collection itself, but only when the
// young generation has grown: an idle agent's stays at its initial size, and a full collection it
// does not need costs ~20 ms of CPU each time.
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface MemoryReducer {
  stop(): void;
}

/** Above V8's initial young generation (1 MiB here), well below what a burst grows it to. */
const GROWN_YOUNG_GENERATION_BYTES = 4 * 2 ** 20;

function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

export interface MemoryReducerOptions {
  intervalMs: number;
  /** For tests: the size to look at and the collection to run. */
  youngGenerationBytes?: () => number;
  gc?: () => void;
}

export function startMemoryReducer(o: MemoryReducerOptions): MemoryReducer {
  const gc = o.gc ?? exposeGc();
  if (!gc) return { stop: () => undefined };
  const size = o.youngGenerationBytes ?? youngGenerationBytes;
  const timer = setInterval(() => {
    if (size() > GROWN_YOUNG_GENERATION_BYTES) gc();
  }, o.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

function exposeGc(): (() => void) | undefined {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  return typeof gc === 'function' ? gc : undefined;
}
