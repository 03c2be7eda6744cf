// Gives memory back after bursts. A burst of pod starts makes V8 grow its young generation (up to
// 32 MiB of semi-spaces) and it keeps that size until a full collection finds the allocation rate
// low. The usual cure, `--max-semi-space-size`, cannot be passed to a Node 20 single executable
// (no execArgv in its SEA config), so the agent runs a full collection itself now and then; on a
// heap of a few tens of MiB that costs a few milliseconds, and the young generation shrinks back.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface MemoryReducer {
  stop(): void;
}

export function startMemoryReducer(intervalMs: number): MemoryReducer {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  if (typeof gc !== 'function') return { stop: () => undefined };
  const timer = setInterval(() => gc(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
