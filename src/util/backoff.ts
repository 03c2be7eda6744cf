// The one back-off of bootlet: every retry and reconnect (API requests, the mirror-pod list+watch,
// the runtime's event streams) waits what this says. Modelled on the Go reflector's
// wait.Backoff/ExponentialBackoffManager and the kubelet's flowcontrol.Backoff:
//
// - the base starts at `initialMs` and is multiplied by `factor` at every failure, up to `maxMs`;
// - each delay is the base stretched by a random factor in [1, 1 + jitter), as wait.Jitter does, so
//   no delay is ever below the floor (`initialMs`) and none reaches `maxMs * (1 + jitter)`;
// - success does NOT reset it. Only a thing that has stayed healthy for `resetAfterMs` starts again
//   from the floor at its next failure: a stream that opens, delivers one event and dies, or a
//   request that works once between failures, keeps backing off instead of spinning.
//
// It lives in src/util because it has no part of its own: apiserver, pleg and podworkers all use it
// and none of them may import another for it. It reads no clock but the one it is given.

export interface BackoffPolicy {
  /** The first delay, and the floor: no delay is shorter. */
  readonly initialMs: number;
  /** The base stops growing here; a jittered delay stays below maxMs * (1 + jitter). */
  readonly maxMs: number;
  /** Spread of each delay, as a fraction of the base (0 = none): the delay is in [base, base * (1 + jitter)). */
  readonly jitter: number;
  /** Healthy this long (see `healthy`) means the next failure starts again from `initialMs`. */
  readonly resetAfterMs: number;
  /** Growth per failure; default 2. */
  readonly factor?: number;
}

/**
 * Every watch and stream reconnect (the mirror-pod list+watch, the runtime's event streams): at
 * least 1 s apart, up to 30 s (45 s with jitter). A stream counts as healthy once it has lived 30 s,
 * not once it delivered an event: a proxy that cuts each stream after its first event must not
 * reset the back-off, and a healthy stream on a quiet node may deliver nothing for minutes.
 */
export const RECONNECT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000, jitter: 0.5, resetAfterMs: 30_000 };

/**
 * A delay of `baseMs` stretched by a random factor in [1, 1 + fraction), as wait.Jitter does: the
 * spread every back-off and periodic wait uses, so that many pods or streams do not fire in step.
 */
export function jittered(baseMs: number, fraction: number, random: () => number = Math.random): number {
  return Math.round(baseMs * (1 + fraction * random()));
}

/**
 * A pod worker step that failed with an error its state did not expect: 1 s doubling to 15 s, up to
 * a quarter more with jitter. Reset (`reset`) by the next step that succeeds.
 */
export const POD_WORKER_FAILURE_BACKOFF: BackoffPolicy = {
  initialMs: 1000,
  maxMs: 15_000,
  jitter: 0.25,
  resetAfterMs: 0,
};

export interface BackoffDeps {
  /** Milliseconds, monotonic enough for durations; default Date.now. */
  now?: () => number;
  /** In [0, 1); default Math.random. */
  random?: () => number;
}

export class Backoff {
  private attempt = 0;
  private healthySince: number | undefined;
  /** The clock this back-off measures healthy periods with. */
  readonly now: () => number;
  private readonly random: () => number;

  constructor(
    readonly policy: BackoffPolicy,
    deps: BackoffDeps = {},
  ) {
    if (
      !(policy.initialMs > 0) ||
      !(policy.maxMs >= policy.initialMs) ||
      !(policy.jitter >= 0) ||
      !(policy.resetAfterMs >= 0) ||
      !((policy.factor ?? 2) >= 1)
    )
      throw new Error(`invalid back-off policy ${JSON.stringify(policy)}`);
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
  }

  /**
   * A failure at `atMs` (default now): how long to wait before the next attempt. If the thing had
   * been healthy for `resetAfterMs` before this failure, the back-off starts again from the floor.
   */
  next(atMs: number = this.now()): number {
    if (this.healthySince !== undefined && atMs - this.healthySince >= this.policy.resetAfterMs) this.attempt = 0;
    this.healthySince = undefined;
    const base = this.base(this.attempt);
    this.attempt++;
    return jittered(base, this.policy.jitter, this.random);
  }

  /**
   * The thing works from `sinceMs` (default now): a stream opened and proved itself, a request was
   * answered. Repeated calls keep the first time; a failure (`next`) ends the healthy period.
   */
  healthy(sinceMs: number = this.now()): void {
    this.healthySince ??= sinceMs;
  }

  /** Whether a failure at `atMs` (default now) would start again from the floor. */
  settled(atMs: number = this.now()): boolean {
    return (
      this.attempt === 0 || (this.healthySince !== undefined && atMs - this.healthySince >= this.policy.resetAfterMs)
    );
  }

  /** Starts again from the floor now, whatever happened (a deliberate restart, not a recovery). */
  reset(): void {
    this.attempt = 0;
    this.healthySince = undefined;
  }

  /** Failures counted since the last reset. */
  get failures(): number {
    return this.attempt;
  }

  private base(attempt: number): number {
    const { initialMs, maxMs } = this.policy;
    // factor ** attempt overflows to Infinity long before attempt does; min() brings it to the cap.
    return Math.min(maxMs, initialMs * (this.policy.factor ?? 2) ** attempt);
  }
}
