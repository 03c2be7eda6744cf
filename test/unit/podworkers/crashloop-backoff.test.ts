import { describe, expect, it } from 'vitest';
import {
  BACKOFF_MAX_ANNOTATION,
  CrashLoopBackOff,
  KUBELET_BACKOFF,
  policyForPod,
} from '../../../src/podworkers/crashloop-backoff.js';

describe('crash-loop back-off', () => {
  it('restarts at once the first time, then waits 10s doubling to the 300s cap', () => {
    const b = new CrashLoopBackOff();
    let t = 1_000_000;
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const startedAt = t;
      const finishedAt = t + 1000; // runs one second, dies
      const d = b.admit('u/c', startedAt, finishedAt, finishedAt, KUBELET_BACKOFF);
      const wait = d.notBefore === undefined ? 0 : d.notBefore - finishedAt;
      delays.push(wait);
      // the caller restarts once allowed
      t = finishedAt + wait;
      if (wait > 0) expect(b.admit('u/c', startedAt, finishedAt, t, KUBELET_BACKOFF).notBefore).toBeUndefined();
    }
    expect(delays).toEqual([0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('forgets the back-off of a container that ran for 10 minutes', () => {
    const b = new CrashLoopBackOff();
    b.admit('u/c', 0, 1000, 1000, KUBELET_BACKOFF);
    expect(b.admit('u/c', 2000, 3000, 3000, KUBELET_BACKOFF).notBefore).toBe(13_000);
    const ranLong = b.admit('u/c', 20_000, 20_000 + 600_000, 20_000 + 600_000, KUBELET_BACKOFF);
    expect(ranLong.notBefore).toBeUndefined();
  });

  it('keeps containers and pods apart', () => {
    const b = new CrashLoopBackOff();
    b.admit('p1/a', 0, 1000, 1000, KUBELET_BACKOFF);
    expect(b.admit('p1/b', 0, 1000, 1000, KUBELET_BACKOFF).notBefore).toBeUndefined();
    expect(b.admit('p1/a', 0, 1000, 1000, KUBELET_BACKOFF).notBefore).toBe(11_000);
    b.forgetPod('p1');
    expect(b.admit('p1/a', 0, 1000, 1000, KUBELET_BACKOFF).notBefore).toBeUndefined();
  });

  it('takes a per-pod cap from an annotation', () => {
    const p = policyForPod({ [BACKOFF_MAX_ANNOTATION]: '5' });
    expect(p.maxMs).toBe(5000);
    expect(p.initialMs).toBe(5000);
    const b = new CrashLoopBackOff();
    b.admit('u/c', 0, 1000, 1000, p);
    expect(b.admit('u/c', 0, 1000, 1000, p).notBefore).toBe(6000);
    b.admit('u/c', 0, 1000, 6000, p);
    expect(b.admit('u/c', 0, 7000, 7000, p).notBefore).toBe(12_000);
    expect(policyForPod({ [BACKOFF_MAX_ANNOTATION]: 'soon' })).toEqual(KUBELET_BACKOFF);
    expect(policyForPod(undefined)).toEqual(KUBELET_BACKOFF);
  });

  it('restarts at once, every time, with a cap of 0', () => {
    const p = policyForPod({ [BACKOFF_MAX_ANNOTATION]: '0' });
    const b = new CrashLoopBackOff();
    for (let i = 0; i < 5; i++)
      expect(b.admit('u/c', i * 1000, i * 1000 + 500, i * 1000 + 500, p).notBefore).toBeUndefined();
  });
});
