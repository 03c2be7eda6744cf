// failSwapOn: like the kubelet, refuse to start while swap is on unless told that is fine.
import { readFileSync } from 'node:fs';

export class SwapOnError extends Error {
  override name = 'SwapOnError';
}

function readSwaps(): string {
  try {
    return readFileSync('/proc/swaps', 'utf8');
  } catch {
    return ''; // no /proc/swaps (a container without it): no swap to speak of
  }
}

/** Throws when swap is on and `failSwapOn` holds; `swaps` is the text of /proc/swaps. */
export function checkSwap(failSwapOn: boolean, swaps: string = readSwaps()): void {
  if (!failSwapOn) return;
  const devices = swaps
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/)[0])
    .filter((d): d is string => d !== undefined && d !== '');
  if (devices.length > 0) {
    throw new SwapOnError(
      `swap is on (${devices.join(', ')}): the kubelet does not run with swap; turn it off, or set --fail-swap-on=false (failSwapOn: false)`,
    );
  }
}
