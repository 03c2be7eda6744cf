// Per-container crash-loop back-off: the first restart is immediate, then 10s doubling to a cap
// (300s, or a per-pod override), reset once a container has run for 10 minutes.

export interface BackOffPolicy {
  initialMs: number;
  maxMs: number;
  /** A container that ran at least this long before dying starts again with no back-off. */
  resetAfterRunMs: number;
}

export const KUBELET_BACKOFF: BackOffPolicy = { initialMs: 10_000, maxMs: 300_000, resetAfterRunMs: 600_000 };

interface Entry {
  delayMs: number;
}

export interface BackOffDecision {
  /** When the next start is allowed (ms since epoch); undefined: now. */
  readonly notBefore?: number;
  readonly delayMs?: number;
}

export class CrashLoopBackOff {
  private readonly entries = new Map<string, Entry>();

  /**
   * Asks whether the container `key` that finished at `finishedAtMs` (having started at
   * `startedAtMs`) may start again at `nowMs`. When it may, the back-off is advanced: the caller
   * is expected to start it now.
   */
  admit(key: string, startedAtMs: number, finishedAtMs: number, nowMs: number, policy: BackOffPolicy): BackOffDecision {
    let entry = this.entries.get(key);
    if (entry && startedAtMs > 0 && finishedAtMs - startedAtMs >= policy.resetAfterRunMs) {
      this.entries.delete(key);
      entry = undefined;
    }
    if (entry) {
      const delay = Math.min(entry.delayMs, policy.maxMs);
      const notBefore = finishedAtMs + delay;
      if (nowMs < notBefore) return { notBefore, delayMs: delay };
      this.entries.set(key, { delayMs: Math.min(delay * 2, policy.maxMs) });
      return {};
    }
    this.entries.set(key, { delayMs: policy.initialMs });
    return {};
  }

  /** Looks without advancing: when would `key` be allowed to start? */
  peek(key: string, finishedAtMs: number, policy: BackOffPolicy): number | undefined {
    const entry = this.entries.get(key);
    return entry ? finishedAtMs + Math.min(entry.delayMs, policy.maxMs) : undefined;
  }

  forgetPod(uid: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(uid + '/')) this.entries.delete(key);
  }
}

/** Operators may shorten (or lengthen) the cap for one pod, e.g. a critical control-plane pod. */
export const BACKOFF_MAX_ANNOTATION = 'bootlet.io/crashloop-backoff-max-seconds';

export function policyForPod(annotations: Record<string, string> | undefined, base: BackOffPolicy = KUBELET_BACKOFF): BackOffPolicy {
  const raw = annotations?.[BACKOFF_MAX_ANNOTATION];
  if (raw === undefined) return base;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0) return base;
  const maxMs = Math.round(seconds * 1000);
  return { ...base, maxMs, initialMs: Math.min(base.initialMs, maxMs) };
}
