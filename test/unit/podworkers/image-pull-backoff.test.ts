import { describe, expect, it } from 'vitest';
import { ImagePullBackOff } from '../../../src/podworkers/image-pull-backoff.js';

describe('image pull back-off', () => {
  it('holds an image 10s after its first failed pull, doubling to 300s, with the last error', () => {
    const b = new ImagePullBackOff();
    let t = 1_000_000;
    const windows: number[] = [];
    for (let i = 0; i < 7; i++) {
      b.failed('u', 'img:1', t, `not found ${i}`);
      const hold = b.hold('u', 'img:1', t)!;
      windows.push(hold.notBefore - t);
      expect(hold.message).toBe(`Back-off pulling image "img:1": ErrImagePull: not found ${i}`);
      expect(b.hold('u', 'img:1', hold.notBefore)).toBeUndefined();
      t = hold.notBefore;
    }
    expect(windows).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('keeps pods and images apart, and forgets on success or with the pod', () => {
    const b = new ImagePullBackOff();
    b.failed('u1', 'a', 0, 'x');
    expect(b.hold('u1', 'b', 0)).toBeUndefined();
    expect(b.hold('u2', 'a', 0)).toBeUndefined();
    b.succeeded('u1', 'a');
    expect(b.hold('u1', 'a', 0)).toBeUndefined();
    b.failed('u1', 'a', 0, 'x');
    b.forgetPod('u1');
    expect(b.hold('u1', 'a', 0)).toBeUndefined();
  });

  it('starts over when the next failure comes long after the last window', () => {
    const b = new ImagePullBackOff();
    b.failed('u', 'a', 0, 'x');
    b.failed('u', 'a', 10_000, 'x'); // window now 20 s, ending at 30 s
    b.failed('u', 'a', 30_000 + 600_000, 'x');
    expect(b.hold('u', 'a', 630_000)!.notBefore).toBe(640_000);
  });
});
