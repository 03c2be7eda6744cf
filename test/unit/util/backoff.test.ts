// The one back-off: floor, cap, jitter, and a reset that needs a healthy period, on an injected clock.
import { describe, expect, it } from 'vitest';
import {
  Backoff,
  jittered,
  POD_WORKER_FAILURE_BACKOFF,
  RECONNECT_BACKOFF,
  type BackoffPolicy,
} from '../../../src/util/backoff.js';

const POLICY: BackoffPolicy = { initialMs: 1000, maxMs: 30_000, jitter: 0.5, resetAfterMs: 30_000 };

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** A random source that returns the given values in turn. */
function sequence(...values: number[]) {
  let i = 0;
  return () => values[i++ % values.length];
}

describe('Backoff', () => {
  it('starts at the floor and doubles up to the cap', () => {
    const b = new Backoff(POLICY, { random: () => 0 });
    const delays = Array.from({ length: 8 }, () => b.next());
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(b.failures).toBe(8);
  });

  it('jitters each delay within [base, base * (1 + jitter)), never below the floor nor up to the jittered cap', () => {
    const lows = new Backoff(POLICY, { random: () => 0 });
    const highs = new Backoff(POLICY, { random: () => 0.999999 });
    for (let i = 0; i < 10; i++) {
      const base = Math.min(POLICY.maxMs, POLICY.initialMs * 2 ** i);
      expect(lows.next()).toBe(base);
      const high = highs.next();
      expect(high).toBeGreaterThan(base * 1.49);
      expect(high).toBeLessThanOrEqual(base * 1.5);
    }
    // With Math.random: every delay in range, and spread (not all the same).
    const seen = new Set<number>();
    for (let n = 0; n < 200; n++) {
      const b = new Backoff(POLICY);
      const d = b.next();
      expect(d).toBeGreaterThanOrEqual(POLICY.initialMs);
      expect(d).toBeLessThanOrEqual(POLICY.initialMs * 1.5);
      seen.add(d);
      for (let i = 0; i < 12; i++) expect(b.next()).toBeLessThanOrEqual(POLICY.maxMs * 1.5);
    }
    expect(seen.size).toBeGreaterThan(20);
  });

  it('does not reset on a success: only after being healthy for resetAfterMs', () => {
    const c = clock();
    const b = new Backoff(POLICY, { now: c.now, random: sequence(0) });
    expect([b.next(), b.next(), b.next()]).toEqual([1000, 2000, 4000]);
    // A stream that opens, proves itself, and dies 29.999 s later: still backing off.
    b.healthy();
    c.advance(29_999);
    expect(b.next()).toBe(8000);
    // Healthy again, for the full period: the next failure starts from the floor.
    b.healthy();
    expect(b.settled()).toBe(false);
    c.advance(30_000);
    expect(b.settled()).toBe(true);
    expect(b.next()).toBe(1000);
    expect(b.next()).toBe(2000);
  });

  it('counts the healthy period from its first mark, and a failure ends it', () => {
    const c = clock();
    const b = new Backoff(POLICY, { now: c.now, random: () => 0 });
    b.next();
    b.next();
    b.healthy();
    c.advance(20_000);
    b.healthy(); // a later success does not move the start of the healthy period
    c.advance(10_000);
    expect(b.next()).toBe(1000);
    // A failure ended it: healthy time before it does not count towards the next reset.
    b.healthy();
    c.advance(15_000);
    b.next();
    b.healthy();
    c.advance(15_000);
    expect(b.next()).toBe(4000);
  });

  it('takes explicit times (a container that ran from startedAt to finishedAt)', () => {
    const b = new Backoff({ initialMs: 10_000, maxMs: 300_000, jitter: 0, resetAfterMs: 600_000 }, { now: () => 0 });
    expect(b.next(100)).toBe(10_000);
    expect(b.next(200)).toBe(20_000);
    b.healthy(1_000);
    expect(b.settled(1_000 + 599_999)).toBe(false);
    expect(b.next(1_000 + 599_999)).toBe(40_000);
    b.healthy(2_000_000);
    expect(b.settled(2_600_000)).toBe(true);
    expect(b.next(2_600_000)).toBe(10_000);
  });

  it('reset() starts from the floor at once', () => {
    const b = new Backoff(POLICY, { random: () => 0 });
    b.next();
    b.next();
    b.reset();
    expect(b.failures).toBe(0);
    expect(b.next()).toBe(1000);
  });

  it('stays at the cap however many failures there are', () => {
    const b = new Backoff(POLICY, { random: () => 0 });
    for (let i = 0; i < 5000; i++) b.next();
    expect(b.next()).toBe(30_000);
  });

  it('refuses a policy that could spin or never grow', () => {
    expect(() => new Backoff({ ...POLICY, initialMs: 0 })).toThrow(/invalid back-off policy/);
    expect(() => new Backoff({ ...POLICY, maxMs: 10 })).toThrow(/invalid back-off policy/);
    expect(() => new Backoff({ ...POLICY, jitter: -1 })).toThrow(/invalid back-off policy/);
    expect(() => new Backoff({ ...POLICY, factor: 0.5 })).toThrow(/invalid back-off policy/);
  });

  it('reconnects are at least a second apart, and reset only after 30 s of health', () => {
    expect(RECONNECT_BACKOFF.initialMs).toBeGreaterThanOrEqual(1000);
    expect(RECONNECT_BACKOFF.resetAfterMs).toBeGreaterThanOrEqual(30_000);
  });
});

describe('jittered', () => {
  it('stretches the base by up to the fraction, never shrinks it', () => {
    expect(jittered(10_000, 0.5, () => 0)).toBe(10_000);
    expect(jittered(10_000, 0.5, () => 0.5)).toBe(12_500);
    expect(jittered(10_000, 0.5, () => 0.999999)).toBeLessThanOrEqual(15_000);
    expect(jittered(10_000, 0, () => 0.9)).toBe(10_000);
  });
});

describe('POD_WORKER_FAILURE_BACKOFF', () => {
  it('waits 1 s doubling to 15 s, a quarter more at most, and starts again after a reset', () => {
    const low = new Backoff(POD_WORKER_FAILURE_BACKOFF, { random: () => 0 });
    expect(Array.from({ length: 6 }, () => low.next())).toEqual([1000, 2000, 4000, 8000, 15_000, 15_000]);
    low.reset();
    expect(low.next()).toBe(1000);
    const high = new Backoff(POD_WORKER_FAILURE_BACKOFF, { random: () => 0.999999 });
    expect(Array.from({ length: 5 }, () => high.next())).toEqual([1250, 2500, 5000, 10_000, 18_750]);
  });
});
