// Which runtimes' CRI events reach every subscriber: containerd before 2.0 shares them out.
import { describe, expect, it } from 'vitest';
import { criEventsReachEverySubscriber } from '../../../src/pleg/cri-events-fanout.js';

describe('criEventsReachEverySubscriber', () => {
  it('is false for containerd 1.x, however it writes its version', () => {
    for (const v of ['1.6.20~ds1', '1.7.24~ds1', 'v1.7.27', '1.7.0-rc.1'])
      expect(criEventsReachEverySubscriber('containerd', v), v).toBe(false);
  });

  it('is true for containerd 2.x and later', () => {
    for (const v of ['2.1.9+unknown', 'v2.0.0', '2.2.0', 'v3.0.0'])
      expect(criEventsReachEverySubscriber('containerd', v), v).toBe(true);
  });

  it('takes another runtime, or a version it cannot read, at its word', () => {
    expect(criEventsReachEverySubscriber('cri-o', '1.28.0')).toBe(true);
    expect(criEventsReachEverySubscriber('containerd', 'devel')).toBe(true);
  });
});
