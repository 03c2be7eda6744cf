// Per-container crash-loop back-off: the first restart is immediate, then 10s doubling to a cap
// (300s, or a per-pod override), forgotten once a container has run for 10 minutes. The growth
// and the reset are the one back-off of bootlet (src/util/backoff.ts); this adds the kubelet's
// rule that a restart is held back until `finishedAt + window`.
import { Backoff } from '../util/backoff.js';

export interface BackOffPolicy {
  initialMs: number;
  maxMs: number;
  /** A container that ran at least this long before dying starts again with no back-off. */
  resetAfterRunMs: number;
}

export const KUBELET_BACKOFF: BackOffPolicy = { initialMs: 10_000, maxMs: 300_000, resetAfterRunMs: 600_000 };

interface Entry {
  readonly backoff: Backoff;
  /** How long after its last death the container must wait before the next start. */
  windowMs: number;
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
    // A cap of 0 (the per-pod annotation set to "0"): always at once.
    if (policy.maxMs <= 0) return {};
    let entry = this.entries.get(key);
    if (entry && startedAtMs > 0) {
      // Ran long enough since its last restart: the back-off starts over.
      entry.backoff.healthy(startedAtMs);
      if (entry.backoff.settled(finishedAtMs)) {
        this.entries.delete(key);
        entry = undefined;
      }
    }
    if (!entry) {
      const backoff = new Backoff({
        initialMs: policy.initialMs,
        maxMs: policy.maxMs,
        jitter: 0,
        resetAfterMs: policy.resetAfterRunMs,
      });
      this.entries.set(key, { backoff, windowMs: backoff.next(finishedAtMs) });
      return {};
    }
    const delay = Math.min(entry.windowMs, policy.maxMs);
    const notBefore = finishedAtMs + delay;
    if (nowMs < notBefore) return { notBefore, delayMs: delay };
    entry.windowMs = entry.backoff.next(finishedAtMs);
    return {};
  }

  /** Looks without advancing: when would `key` be allowed to start? */
  peek(key: string, finishedAtMs: number, policy: BackOffPolicy): number | undefined {
    const entry = this.entries.get(key);
    return entry ? finishedAtMs + Math.min(entry.windowMs, policy.maxMs) : undefined;
  }

  forgetPod(uid: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(uid + '/')) this.entries.delete(key);
  }
}

/** Operators may shorten (or lengthen) the cap for one pod, e.g. a critical control-plane pod. */
export const BACKOFF_MAX_ANNOTATION = 'bootlet.io/crashloop-backoff-max-seconds';

export function policyForPod(
  annotations: Record<string, string> | undefined,
  base: BackOffPolicy = KUBELET_BACKOFF,
): BackOffPolicy {
  const raw = annotations?.[BACKOFF_MAX_ANNOTATION];
  if (raw === undefined) return base;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0) return base;
  const maxMs = Math.round(seconds * 1000);
  return { ...base, maxMs, initialMs: Math.min(base.initialMs, maxMs) };
}
