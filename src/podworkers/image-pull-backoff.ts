// Per-image pull back-off, next to the crash-loop back-off, as the kubelet keeps it (keyed by pod
// UID and image, 10s doubling to 300s): after a failed pull the image is not tried again until its
// window has passed; meanwhile the container waits with reason ImagePullBackOff. A successful pull
// forgets it. The growth is the one back-off of bootlet (src/util/backoff.ts).
import { Backoff, type BackoffPolicy } from '../util/backoff.js';

/** The kubelet's imageBackOffPeriod and MaxImageBackOff; forgotten after 2 × max without failure. */
export const IMAGE_PULL_BACKOFF: BackoffPolicy = {
  initialMs: 10_000,
  maxMs: 300_000,
  jitter: 0,
  resetAfterMs: 600_000,
};

interface Entry {
  readonly backoff: Backoff;
  notBefore: number;
  delayMs: number;
  /** The last failure, for the waiting message. */
  message: string;
}

export interface PullHold {
  readonly notBefore: number;
  readonly reason: 'ImagePullBackOff';
  readonly message: string;
}

export class ImagePullBackOff {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly policy: BackoffPolicy = IMAGE_PULL_BACKOFF) {}

  private static key(uid: string, image: string): string {
    return `${uid}_${image}`;
  }

  /** A pull of `image` for pod `uid` failed at `nowMs` with `message`. */
  failed(uid: string, image: string, nowMs: number, message: string): void {
    const key = ImagePullBackOff.key(uid, image);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { backoff: new Backoff(this.policy, { now: () => nowMs }), notBefore: 0, delayMs: 0, message };
      this.entries.set(key, entry);
    } else {
      // A failure long after the previous window (no attempt failed meanwhile) starts over.
      entry.backoff.healthy(entry.notBefore);
    }
    entry.delayMs = entry.backoff.next(nowMs);
    entry.notBefore = nowMs + entry.delayMs;
    entry.message = message;
  }

  /** The image was pulled (or found present): no more back-off for it. */
  succeeded(uid: string, image: string): void {
    this.entries.delete(ImagePullBackOff.key(uid, image));
  }

  /** Whether a start of `image` for pod `uid` must wait at `nowMs`, and until when. */
  hold(uid: string, image: string, nowMs: number): PullHold | undefined {
    const entry = this.entries.get(ImagePullBackOff.key(uid, image));
    if (!entry || nowMs >= entry.notBefore) return undefined;
    return {
      notBefore: entry.notBefore,
      reason: 'ImagePullBackOff',
      message: `Back-off pulling image ${JSON.stringify(image)}: ErrImagePull: ${entry.message}`,
    };
  }

  forgetPod(uid: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(`${uid}_`)) this.entries.delete(key);
  }
}
