import { describe, expect, it } from 'vitest';
import { onProbeResult, statusObserver } from '../../../src/status/worker-events.js';
import { staticPod, UID } from './fixtures.js';

describe('status nudges', () => {
  it('computes a status as a pod arrives, recomputes after every sync, on termination and on removal', () => {
    const updated: string[] = [];
    const resized: string[] = [];
    const o = statusObserver({
      update: (uid) => updated.push(uid),
      resizeApplied: (uid, error) => resized.push(`${uid} ${error ?? 'ok'}`),
    });
    o.podAdded?.('u1');
    o.podSynced?.(staticPod(), undefined, false);
    o.podSynced?.(staticPod(), undefined, true);
    o.podTerminating?.('u2');
    o.podRemoved?.('u3');
    expect(updated).toEqual(['u1', UID, UID, 'u2', 'u3']);
    o.podResized?.('u4', 'cannot set memory limit');
    o.podResized?.('u4');
    expect(resized).toEqual(['u4 cannot set memory limit', 'u4 ok']);
  });

  it('recomputes only for probe results that changed', () => {
    const updated: string[] = [];
    const f = onProbeResult({ update: (uid) => updated.push(uid) });
    f({ podUid: 'a', changed: false });
    f({ podUid: 'b', changed: true });
    expect(updated).toEqual(['b']);
  });
});
