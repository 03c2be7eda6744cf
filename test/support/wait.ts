// Polls a condition until it holds or a generous deadline passes; the error says what was awaited
// and what was last seen, so a red test explains itself.
import { inspect } from 'node:util';

// The real clock and timer, taken before any test can install fake timers: a wait is in real time
// even while the code under test runs on a fake clock (vi.useFakeTimers).
const realSetTimeout = globalThis.setTimeout;
const realNow = Date.now;

export interface WaitOptions {
  timeoutMs: number;
  /** Delay between polls; default 100 ms. */
  intervalMs?: number;
  /** What is being waited for, in words: "etcd /health to answer". */
  what: string;
}

type Falsy = undefined | false | null;

/**
 * Calls `fn` until it returns something other than undefined, null or false (or throws no more),
 * and returns that value. On timeout throws an Error naming `what` and the last value or error.
 */
export async function waitFor<T>(fn: () => Promise<T | Falsy> | T | Falsy, opts: WaitOptions): Promise<T> {
  const interval = opts.intervalMs ?? 100;
  const start = realNow();
  const deadline = start + opts.timeoutMs;
  let last: { value?: unknown; error?: unknown } = {};
  for (let attempt = 1; ; attempt++) {
    try {
      const v = await fn();
      if (v !== undefined && v !== null && v !== false) return v as T;
      last = { value: v };
    } catch (e) {
      last = { error: e };
    }
    if (realNow() >= deadline) {
      const seen =
        'error' in last
          ? `last error: ${last.error instanceof Error ? (last.error.stack ?? last.error.message) : inspect(last.error)}`
          : `last value: ${inspect(last.value, { depth: 4 })}`;
      const err = new Error(
        `timed out after ${realNow() - start} ms (${attempt} tries) waiting for ${opts.what}; ${seen}`,
      );
      if ('error' in last) (err as Error & { cause?: unknown }).cause = last.error;
      throw err;
    }
    await new Promise((r) => realSetTimeout(r, Math.min(interval, Math.max(0, deadline - realNow()))));
  }
}
