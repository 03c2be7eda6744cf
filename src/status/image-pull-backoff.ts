// The kubelet shows ErrImagePull when a pull has just failed and ImagePullBackOff while it waits
// to try again. The pod worker reports ErrImagePull after every failed sync; counting those
// failures in a row lets the status show the kubelet's sequence: the first failure as
// ErrImagePull, the following ones as ImagePullBackOff.
import type { Container } from 'kubernetes-types/core/v1';
import type { WaitingReason } from './types.js';

export const ERR_IMAGE_PULL = 'ErrImagePull';
export const IMAGE_PULL_BACK_OFF = 'ImagePullBackOff';

export function imagePullWaiting(spec: Container, why: WaitingReason, failuresInARow: number): WaitingReason {
  if (why.reason !== ERR_IMAGE_PULL || failuresInARow < 2) return { reason: why.reason, message: why.message };
  return { reason: IMAGE_PULL_BACK_OFF, message: `Back-off pulling image ${JSON.stringify(spec.image ?? '')}: ${ERR_IMAGE_PULL}: ${why.message}` };
}

/**
 * Next counts after a sync: a container whose sync failed with ErrImagePull again counts one
 * more; any other outcome starts over. Only a new sync (a different `syncAt`) counts.
 */
export function nextPullFailures(
  prev: ReadonlyMap<string, number>,
  waiting: ReadonlyMap<string, WaitingReason>,
  isNewSync: boolean,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, w] of waiting) {
    if (w.reason !== ERR_IMAGE_PULL) continue;
    const before = prev.get(name) ?? 0;
    out.set(name, isNewSync ? before + 1 : Math.max(before, 1));
  }
  return out;
}
